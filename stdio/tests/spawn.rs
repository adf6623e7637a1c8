//! Starting a server: what it is given, and what happens when it cannot start.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use mcp_sansio::{Allowlist, Config, Error};
use mcp_sansio_stdio::{ServerCommand, StdioClient, StdioError};

fn config() -> Config {
    let mut config = Config::new(Allowlist::none());
    config.limits.operation_timeout = Duration::from_secs(2);
    config
}

#[test]
fn a_program_that_cannot_start_is_a_spawn_error() {
    let command = ServerCommand::new("/nonexistent/mcp-server");
    match StdioClient::spawn(&command, config()) {
        Err(StdioError::Spawn(e)) => assert_eq!(e.kind(), std::io::ErrorKind::NotFound),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_server_gets_only_path_and_what_it_is_given() {
    let dir = std::env::temp_dir().join(format!("mcp-stdio-env-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("env.txt");
    assert!(
        std::env::var_os("HOME").is_some(),
        "the test needs a HOME to leave behind"
    );
    let command = ServerCommand::new("sh")
        .args(["-c", "env > \"$OUT_FILE\"; cat > /dev/null"])
        .env("OUT_FILE", &out);
    let client = StdioClient::spawn(&command, config()).unwrap();
    let status = client.close(Duration::from_secs(1)).unwrap();
    assert!(status.success(), "{status}");
    let env = std::fs::read_to_string(&out).unwrap();
    let names: Vec<&str> = env.lines().filter_map(|l| l.split('=').next()).collect();
    assert!(
        names.contains(&"PATH") && names.contains(&"OUT_FILE"),
        "{names:?}"
    );
    assert!(
        !names.contains(&"HOME"),
        "the parent's environment leaked: {names:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_server_that_exits_at_once_fails_the_handshake_as_closed() {
    let command = ServerCommand::new("true");
    let mut client = StdioClient::spawn(&command, config()).unwrap();
    match client.connect() {
        Err(StdioError::Mcp(Error::Closed)) => {}
        other => panic!("{other:?}"),
    }
    assert!(client.close(Duration::from_secs(1)).unwrap().success());
}

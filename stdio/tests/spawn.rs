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
    let error = match StdioClient::spawn(&command, config()) {
        Err(error @ StdioError::Spawn(_)) => error,
        other => panic!("{other:?}"),
    };
    let StdioError::Spawn(cause) = &error else {
        unreachable!()
    };
    assert_eq!(cause.kind(), std::io::ErrorKind::NotFound);
    // Printed as a chain, each part once: this crate's sentence, then the system's.
    let mut chain = vec![error.to_string()];
    let mut source = std::error::Error::source(&error);
    while let Some(next) = source {
        chain.push(next.to_string());
        source = next.source();
    }
    assert_eq!(chain[0], "the server could not be started");
    assert_eq!(chain[1], cause.to_string());
    assert_eq!(chain.len(), 2, "{chain:?}");
}

#[test]
fn an_error_of_the_core_reads_as_the_core_s_own() {
    let error = StdioError::from(Error::Closed);
    assert_eq!(error.to_string(), Error::Closed.to_string());
    assert!(std::error::Error::source(&error).is_none());
    assert_eq!(
        StdioError::Stopped.to_string(),
        "the application stopped waiting for the server"
    );
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

//! The server's process: how it is started and how it is ended, shared by every transport
//! that runs a server as a child (this crate's [`StdioClient`](crate::StdioClient), and the
//! async driver of `mcp-sansio-tokio`).

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::time::Duration;

use rustix::event::{poll, PollFd, PollFlags};
use rustix::process::{kill_process_group, Pid, Signal};

/// How long [`Drop`] gives the server to exit on its own before signalling its group.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(1);

/// How long the group gets between SIGTERM and SIGKILL.
const TERM_GRACE: Duration = Duration::from_millis(100);

/// Where the server's stderr goes. It can never block the server.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum StderrMode {
    /// Discarded (`/dev/null`). The default: stderr is the server's, never protocol.
    #[default]
    Discard,
    /// Forwarded to this process's stderr.
    Inherit,
    /// Appended to a file.
    File(PathBuf),
}

/// The server to start: a program, its arguments, an explicit environment, and where its
/// stderr goes.
#[derive(Clone, Debug)]
pub struct ServerCommand {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    stderr: StderrMode,
    reap_orphans: bool,
}

impl ServerCommand {
    /// Runs `program`. Its environment holds only `PATH` (this process's value) until
    /// [`env`](Self::env) adds more: a server gets no secrets it was not given.
    pub fn new(program: impl Into<OsString>) -> Self {
        let env = std::env::var_os("PATH")
            .map(|path| (OsString::from("PATH"), path))
            .into_iter()
            .collect();
        ServerCommand {
            program: program.into(),
            args: Vec::new(),
            env,
            stderr: StderrMode::Discard,
            reap_orphans: false,
        }
    }

    /// Adds an argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    pub fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets one environment variable (replacing an earlier value, `PATH` included).
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        let key = key.into();
        self.env.retain(|(k, _)| *k != key);
        self.env.push((key, value.into()));
        self
    }

    /// Starts from an empty environment: not even `PATH`.
    pub fn env_clear(mut self) -> Self {
        self.env.clear();
        self
    }

    /// Where the server's stderr goes.
    pub fn stderr(mut self, mode: StderrMode) -> Self {
        self.stderr = mode;
        self
    }

    /// Makes this process a child subreaper (Linux) so that when the server's group is ended,
    /// processes the server started and left behind are reaped here rather than left to
    /// PID 1. Off by default, because it is a setting of the whole process: turn it on where
    /// the system's init does not reap orphans (some containers), or to be sure no zombie
    /// remains.
    pub fn reap_orphans(mut self, reap: bool) -> Self {
        self.reap_orphans = reap;
        self
    }
}

/// A server running as a child process in a process group of its own, until
/// [`close`](Self::close) (or drop) ends the whole group and reaps it.
///
/// Its pipes are handed out by [`spawn`](Self::spawn) and belong to the transport; the
/// transport closes the server's stdin (drops it) before it closes the process, which is how
/// the server is first asked to exit.
#[derive(Debug)]
pub struct ServerProcess {
    child: Child,
    pgid: Option<Pid>,
    reap_orphans: bool,
    closed: bool,
}

impl ServerProcess {
    /// Starts `command` in a process group of its own, with only the command's environment,
    /// stdin and stdout piped, and stderr where the command says. Returns the process and its
    /// stdin and stdout (blocking, as std makes them).
    ///
    /// # Errors
    /// The error starting the program (or opening the stderr file, or becoming a subreaper).
    pub fn spawn(command: &ServerCommand) -> io::Result<(ServerProcess, ChildStdin, ChildStdout)> {
        if command.reap_orphans {
            rustix::process::set_child_subreaper(Some(rustix::process::getpid()))?;
        }
        let stderr = match &command.stderr {
            StderrMode::Discard => Stdio::null(),
            StderrMode::Inherit => Stdio::inherit(),
            StderrMode::File(path) => File::options()
                .create(true)
                .append(true)
                .open(path)
                .map(Stdio::from)?,
        };
        let mut child = Command::new(&command.program)
            .args(&command.args)
            .env_clear()
            .envs(command.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .process_group(0)
            .spawn()?;
        let pgid = i32::try_from(child.id()).ok().and_then(Pid::from_raw);
        let pipes = (child.stdin.take(), child.stdout.take());
        let process = ServerProcess {
            child,
            pgid,
            reap_orphans: command.reap_orphans,
            closed: false,
        };
        match pipes {
            (Some(stdin), Some(stdout)) => Ok((process, stdin, stdout)),
            // Dropping the process ends it.
            _ => Err(io::Error::other("the child has no pipes")),
        }
    }

    /// The server's process id (also its process group's id).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Ends the server: gives it `grace` to exit (its stdin should be closed by now), then
    /// sends SIGTERM to its whole process group, then SIGKILL, and reaps it. Returns its exit
    /// status. The group is signalled even when the server exited on its own, so nothing it
    /// started outlives it; the server is reaped only after that, so its group id cannot be
    /// reused meanwhile. Blocks for at most `grace` and 100 ms more (and, with
    /// [`ServerCommand::reap_orphans`], one second of reaping).
    ///
    /// # Errors
    /// The error reaping the server.
    pub fn close(mut self, grace: Duration) -> io::Result<ExitStatus> {
        self.shutdown(grace)
    }

    fn shutdown(&mut self, grace: Duration) -> io::Result<ExitStatus> {
        self.closed = true;
        let exited = self.wait_for_exit(grace);
        if let Some(pgid) = self.pgid {
            // ESRCH only means the group is already gone.
            let _ = kill_process_group(pgid, Signal::TERM);
            if !exited {
                self.wait_for_exit(TERM_GRACE);
            }
            let _ = kill_process_group(pgid, Signal::KILL);
        }
        let status = self.child.wait()?;
        if self.reap_orphans {
            self.reap_group();
        }
        Ok(status)
    }

    /// Waits up to `limit` for the server to exit, without reaping it.
    ///
    /// On Linux the wait is a `poll` on a pidfd, which wakes the moment the server exits;
    /// where pidfds are not available it checks in short steps that grow to 5 ms. Sleeping
    /// in long steps would leave the caller idle past the exit (and, measured, left the
    /// next server's start slower by about 0.2 ms on a cold core).
    fn wait_for_exit(&self, limit: Duration) -> bool {
        let Some(pid) = self.pgid else { return true };
        let exited = || {
            let options = rustix::process::WaitIdOptions::EXITED
                | rustix::process::WaitIdOptions::NOHANG
                | rustix::process::WaitIdOptions::NOWAIT;
            !matches!(
                rustix::process::waitid(rustix::process::WaitId::Pid(pid), options),
                Ok(None)
            )
        };
        if exited() {
            return true;
        }
        let start = std::time::Instant::now();
        if let Ok(pidfd) = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()) {
            while !exited() {
                let left = limit.saturating_sub(start.elapsed());
                if left.is_zero() {
                    return false;
                }
                let Ok(timeout) = rustix::event::Timespec::try_from(left) else {
                    return false;
                };
                let mut fds = [PollFd::new(&pidfd, PollFlags::IN)];
                match poll(&mut fds, Some(&timeout)) {
                    Ok(_) | Err(rustix::io::Errno::INTR) => {}
                    Err(_) => break,
                }
            }
            if exited() {
                return true;
            }
        }
        let mut step = Duration::from_micros(50);
        loop {
            if exited() {
                return true;
            }
            if start.elapsed() >= limit {
                return false;
            }
            std::thread::sleep(step.min(limit.saturating_sub(start.elapsed())));
            step = (step * 2).min(Duration::from_millis(5));
        }
    }

    /// Reaps every member of the server's group that became this process's child when the
    /// server died (this process being a subreaper), for a bounded time.
    fn reap_group(&self) {
        let Some(pgid) = self.pgid else { return };
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_secs(1) {
            match rustix::process::waitpgid(pgid, rustix::process::WaitOptions::NOHANG) {
                Ok(Some(_)) => {}
                // No child of ours is left in the group.
                Err(_) => return,
                // Orphans are re-parented to us a moment after the server dies.
                Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            }
        }
    }
}
impl Drop for ServerProcess {
    fn drop(&mut self) {
        if !self.closed {
            let _ = self.shutdown(DEFAULT_GRACE);
        }
    }
}

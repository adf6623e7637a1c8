//! The wire of a byte stream: newline-framed JSON-RPC over a reader and a writer (a server
//! process's pipes, a socket's halves), and the server process behind it, if there is one.

use std::process::ExitStatus;
use std::time::Duration;

use mcp_sansio::auth::Token;
use mcp_sansio::{Client, Event, Instant};
use mcp_sansio_stdio::ServerProcess;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::driver::{Clock, Wire};

/// How many bytes one read from the server takes at most.
const READ_CHUNK: usize = 64 * 1024;

/// How many bytes of frames the wire takes from the client before it writes them (one frame
/// more at most): a pipe's worth. The rest wait in the client, under
/// `Limits::unsent_bytes`, so a server that does not read fails the connection there
/// instead of growing this buffer.
const WRITE_BATCH: usize = 64 * 1024;

/// A byte stream to a server, and the client that speaks over it.
pub(crate) struct StreamWire<R, W> {
    client: Client,
    reader: R,
    writer: W,
    /// What the client queued and the writer has not taken yet.
    outgoing: Vec<u8>,
    input: Vec<u8>,
    /// Whether the server still takes input: after a failed write it does not.
    writable: bool,
    process: Option<ServerProcess>,
}

impl<R, W> StreamWire<R, W> {
    /// The wire over `reader` and `writer`; `process` is the server behind them, if this
    /// driver started it.
    pub(crate) fn new(
        client: Client,
        reader: R,
        writer: W,
        process: Option<ServerProcess>,
    ) -> Self {
        StreamWire {
            client,
            reader,
            writer,
            outgoing: Vec::new(),
            input: vec![0; READ_CHUNK],
            writable: true,
            process,
        }
    }
}

impl<R, W> Wire for StreamWire<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    fn client(&mut self) -> &mut Client {
        &mut self.client
    }

    fn poll_event(&mut self) -> Option<Event> {
        self.client.poll_event()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.client.poll_timeout()
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.client.handle_timeout(now);
    }

    fn flush(&mut self, _clock: Clock) {
        if !self.writable {
            // Nothing reaches the server any more: whatever the client queues is dropped.
            while self.client.poll_transmit(&mut self.outgoing).is_some() {
                self.outgoing.clear();
            }
            return;
        }
        while self.outgoing.len() < WRITE_BATCH
            && self.client.poll_transmit(&mut self.outgoing).is_some()
        {}
    }

    async fn io(&mut self, clock: Clock) {
        // Both halves are cancel-safe: a write either took bytes or did not, a read
        // either gave bytes or did not.
        tokio::select! {
            written = self.writer.write(&self.outgoing), if !self.outgoing.is_empty() => {
                match written {
                    Ok(n) if n > 0 => {
                        self.outgoing.drain(..n.min(self.outgoing.len()));
                    }
                    // The server closed its input: it will answer nothing more.
                    Ok(_) | Err(_) => {
                        self.writable = false;
                        self.client.handle_close();
                    }
                }
            }
            read = self.reader.read(&mut self.input) => match read {
                Ok(0) | Err(_) => self.client.handle_close(),
                Ok(n) => {
                    let bytes = self.input.get(..n).unwrap_or_default();
                    self.client.handle_input(bytes, clock.now());
                }
            },
        }
    }

    fn unreachable(&mut self) -> Option<String> {
        None
    }

    fn authorize(&mut self, _token: Option<&Token>) -> bool {
        false
    }

    async fn end(self, grace: Duration) -> Option<ExitStatus> {
        let StreamWire {
            mut writer,
            process,
            ..
        } = self;
        // The server's input ends first: how it is asked to exit. A peer that does not
        // take the shutdown gets no longer than the grace.
        let _ = tokio::time::timeout(grace, writer.shutdown()).await;
        drop(writer);
        let process = process?;
        // Waiting, signalling and reaping block for a bounded time: on the blocking pool.
        match tokio::task::spawn_blocking(move || process.close(grace)).await {
            Ok(Ok(status)) => Some(status),
            _ => None,
        }
    }
}

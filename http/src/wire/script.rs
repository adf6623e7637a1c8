//! Scripted bytes in place of a socket, for the reader's tests and its fuzz target: a reply
//! arrives in the pieces given, one per read, and what is written is kept.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::{BodyEnd, Conn, Head, Stream};
use crate::Seen;

/// Bytes a reply arrives in, one piece per read, and what was written.
pub(crate) struct Script {
    pieces: VecDeque<Vec<u8>>,
    pub(crate) written: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl Read for Script {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(mut piece) = self.pieces.pop_front() else {
            return Ok(0);
        };
        let n = piece.len().min(buf.len());
        if let (Some(to), Some(from)) = (buf.get_mut(..n), piece.get(..n)) {
            to.copy_from_slice(from);
        }
        if n < piece.len() {
            self.pieces.push_front(piece.split_off(n));
        }
        Ok(n)
    }
}

impl Write for Script {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.written
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(buf.to_vec());
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A connection whose reply arrives in `pieces`.
pub(crate) fn scripted(pieces: Vec<Vec<u8>>) -> Conn {
    Conn::new(Stream::Script(Script {
        pieces: pieces.into(),
        written: Arc::default(),
    }))
}

/// What reading one reply made of it: the head (or none, when it was refused), the body's
/// bytes, how the body ended, and the most the connection's buffer held.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Reading {
    pub(crate) head: Option<Head>,
    pub(crate) body: Vec<u8>,
    pub(crate) end: Option<BodyEnd>,
    pub(crate) buffer: usize,
}

/// Reads one reply from `pieces`, heads and framing lines bounded by `most`.
pub(crate) fn read(pieces: Vec<Vec<u8>>, most: usize) -> Reading {
    let deadline = Instant::now() + Duration::from_secs(3600);
    let mut conn = scripted(pieces);
    let mut body = Vec::new();
    let head = conn.read_head(deadline, most).ok();
    let end = head.as_ref().map(|head| {
        conn.read_body(head.framing, deadline, most, &mut |seen| {
            if let Seen::Body(bytes) = seen {
                body.extend_from_slice(bytes);
            }
            true
        })
    });
    Reading {
        head,
        body,
        end,
        buffer: conn.buf.len(),
    }
}

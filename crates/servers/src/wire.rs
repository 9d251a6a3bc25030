//! The socket under both wire clients ([`crate::pgwire`], [`crate::mywire`]): one
//! connection, one reused read buffer, and a wait in poll(POLLIN) before each read, as
//! libpq and libmariadb wait. Why poll and not a blocking read: a reader asleep on a
//! unix socket is also woken when the server reads the request (the write-space
//! wakeup shares the socket's wait queue) and goes back to sleep, a second context
//! switch per query; with blocking reads plumb spent 1.3-1.7× sysbench's client CPU per
//! query once the server took long enough (bench/compare-sysbench.sh).

use crate::error::SqlError;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::Path;

enum Stream {
    Unix(UnixStream),
    Tcp(TcpStream),
}

/// A connected socket and what has been read from it but not yet consumed.
pub(crate) struct Wire {
    stream: Stream,
    /// Bytes read; `buf[pos..end]` is not consumed yet.
    pub(crate) buf: Vec<u8>,
    pub(crate) pos: usize,
    end: usize,
}

/// A socket error, as a query error of `context`.
pub(crate) fn io_err(context: &str, e: std::io::Error) -> SqlError {
    SqlError::Query {
        context: context.to_string(),
        message: format!("error communicating with the server: {e}"),
        code: None,
    }
}

impl Wire {
    /// Connects to a unix socket at `socket`, else to `host:port` over TCP (no Nagle).
    pub(crate) fn connect(socket: Option<&Path>, host: &str, port: u16) -> std::io::Result<Wire> {
        let stream = match socket {
            Some(path) => Stream::Unix(UnixStream::connect(path)?),
            None => {
                let s = TcpStream::connect((host, port))?;
                let _ = s.set_nodelay(true);
                Stream::Tcp(s)
            }
        };
        Ok(Wire {
            stream,
            buf: vec![0; 64 * 1024],
            pos: 0,
            end: 0,
        })
    }

    /// Sends `b` whole.
    pub(crate) fn write_all(&mut self, b: &[u8]) -> std::io::Result<()> {
        match &mut self.stream {
            Stream::Unix(s) => s.write_all(b),
            Stream::Tcp(s) => s.write_all(b),
        }
    }

    /// Makes at least `n` unconsumed bytes available, reading as needed.
    pub(crate) fn fill(&mut self, n: usize) -> std::io::Result<()> {
        if self.end - self.pos >= n {
            return Ok(());
        }
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        if self.buf.len() < n {
            self.buf.resize(n.next_power_of_two(), 0);
        }
        while self.end < n {
            self.wait_readable()?;
            let got = match &mut self.stream {
                Stream::Unix(s) => s.read(&mut self.buf[self.end..])?,
                Stream::Tcp(s) => s.read(&mut self.buf[self.end..])?,
            };
            if got == 0 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the server closed the connection",
                ));
            }
            self.end += got;
        }
        Ok(())
    }

    /// Consumes `n` bytes (already filled) and returns where they are in `buf`.
    pub(crate) fn take(&mut self, n: usize) -> (usize, usize) {
        let a = self.pos;
        self.pos += n;
        (a, a + n)
    }

    fn wait_readable(&mut self) -> std::io::Result<()> {
        let fd = match &self.stream {
            Stream::Unix(s) => s.as_raw_fd(),
            Stream::Tcp(s) => s.as_raw_fd(),
        };
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        loop {
            // SAFETY: one valid pollfd for the duration of the call.
            if unsafe { libc::poll(&mut p, 1, -1) } >= 0 {
                return Ok(());
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

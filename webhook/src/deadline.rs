//! A deadline for a connection's first bytes. hyper reads up to the 24 bytes
//! of HTTP/2's preface to choose between HTTP/1 and HTTP/2 before any of its
//! own timeouts applies, so a client that completes the TLS handshake and then
//! sends nothing (or the start of the preface) would hold its connection for
//! good. Once those bytes are in, hyper's HTTP/1 header-read timeout takes over.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum_server::accept::Accept;
use futures::future::{BoxFuture, TryFutureExt};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// The length of HTTP/2's connection preface (`PRI * HTTP/2.0…`).
const PREFACE_LEN: usize = 24;

/// Wraps the connections another acceptor makes (after the TLS handshake, for
/// TLS) in a [`FirstBytes`] deadline.
#[derive(Clone)]
pub struct FirstBytesAcceptor<A> {
    inner: A,
    timeout: Duration,
}

impl<A> FirstBytesAcceptor<A> {
    /// Connections made by `inner` must send their first bytes within `timeout`.
    pub fn new(inner: A, timeout: Duration) -> Self {
        Self { inner, timeout }
    }
}

impl<I, S, A> Accept<I, S> for FirstBytesAcceptor<A>
where
    A: Accept<I, S>,
    A::Future: Send + 'static,
{
    type Stream = FirstBytes<A::Stream>;
    type Service = A::Service;
    type Future = BoxFuture<'static, io::Result<(Self::Stream, Self::Service)>>;

    fn accept(&self, stream: I, service: S) -> Self::Future {
        let timeout = self.timeout;
        Box::pin(
            self.inner
                .accept(stream, service)
                .map_ok(move |(stream, service)| (FirstBytes::new(stream, timeout), service)),
        )
    }
}

/// A connection that fails its reads once its deadline has passed without
/// [`PREFACE_LEN`] bytes read.
pub struct FirstBytes<S> {
    inner: S,
    /// Dropped once enough bytes were read.
    deadline: Option<Pin<Box<Sleep>>>,
    read: usize,
}

impl<S> FirstBytes<S> {
    fn new(inner: S, timeout: Duration) -> Self {
        Self {
            inner,
            deadline: Some(Box::pin(tokio::time::sleep(timeout))),
            read: 0,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for FirstBytes<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(result) => {
                this.read += buf.filled().len() - before;
                if this.read >= PREFACE_LEN {
                    this.deadline = None;
                }
                Poll::Ready(result)
            }
            Poll::Pending => {
                let expired = this
                    .deadline
                    .as_mut()
                    .is_some_and(|deadline| deadline.as_mut().poll(cx).is_ready());
                if expired {
                    Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "no request within the header-read timeout",
                    )))
                } else {
                    Poll::Pending
                }
            }
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for FirstBytes<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

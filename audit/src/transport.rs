//! The connection to the API server, through the proxy kubectl would take
//! ([`hpa_lint::proxy`]), made as Go's `net/http` makes it for kubectl:
//!
//! - to an `https://` server through an http or https proxy: a `CONNECT`
//!   tunnel, `Proxy-Authorization: Basic …` from the proxy URL's user and
//!   password;
//! - to an `http://` server through one: each request in absolute form
//!   (`GET http://server/path`) to the proxy, with that header;
//! - through a SOCKS5 proxy: its user and password method when the URL
//!   has them, the server's name resolved by the proxy;
//! - TLS to an https proxy with the cluster's TLS settings, as Go's
//!   transport uses one configuration for both.
//!
//! kube's own client would tunnel to an `http://` server too, and drop a
//! SOCKS5 proxy's credentials; its layers (base URL, credentials, headers)
//! are used as they are.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hpa_lint::proxy::ProxyUrl;
use http::header::PROXY_AUTHORIZATION;
use http::{HeaderValue, Uri};
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::client::legacy::connect::proxy::{SocksV5, Tunnel};
use hyper_util::client::legacy::connect::{Connect, Connected, Connection, HttpConnector};
use hyper_util::rt::TokioExecutor;
use kube::client::{Body, ConfigExt as _};
use kube::{Client, Config};
use tower::{BoxError, Service, ServiceBuilder};

use crate::kubeconfig;

/// How long opening a TCP connection may take: client-go's dialer's limit,
/// and kube's.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// A client for the server of `config`, through `proxy` when there is one.
pub fn client(mut config: Config, proxy: Option<&ProxyUrl>) -> Result<Client> {
    let mut tcp = HttpConnector::new();
    tcp.enforce_http(false);
    tcp.set_connect_timeout(Some(CONNECT_TIMEOUT));
    let Some(proxy) = proxy else {
        return finish(&config, tls(&config, tcp)?);
    };
    if proxy.host.is_empty() {
        bail!(
            "the proxy configured (the cluster's proxy-url, $HTTPS_PROXY or $HTTP_PROXY) has no host"
        );
    }
    let address = || {
        proxy
            .address()
            .ok_or_else(|| anyhow!("the proxy {proxy} has a port out of range"))
    };
    match proxy.scheme.as_str() {
        "socks5" | "socks5h" => {
            let address = address()?;
            let mut socks = SocksV5::new(uri(&format!("socks5://{address}"))?, tcp);
            if let Some((user, password)) = &proxy.user {
                socks = socks.with_auth(user.clone(), password.clone().unwrap_or_default());
            }
            // SOCKS would take 443 for a URL without a port.
            config.cluster_url = with_port(&config.cluster_url)?;
            finish(&config, tls(&config, socks)?)
        }
        "http" | "https" => {
            let to_proxy = tls(&config, tcp)?;
            let proxy_uri = uri(&format!("{}://{}", proxy.scheme, address()?))?;
            let authorization = proxy.user.as_ref().map(basic).transpose()?;
            if config.cluster_url.scheme_str() == Some("https") {
                let mut tunnel = Tunnel::new(proxy_uri, to_proxy);
                if let Some(authorization) = authorization {
                    tunnel = tunnel.with_auth(authorization);
                }
                finish(&config, tls(&config, tunnel)?)
            } else {
                if let Some(authorization) = authorization {
                    config.headers.push((PROXY_AUTHORIZATION, authorization));
                }
                finish(
                    &config,
                    Forward {
                        proxy: proxy_uri,
                        inner: to_proxy,
                    },
                )
            }
        }
        other => bail!(
            "the proxy {proxy} has the scheme `{other}`: kubectl hpa-lint connects through http, https and socks5 proxies"
        ),
    }
}

fn uri(text: &str) -> Result<Uri> {
    text.parse()
        .map_err(|_| anyhow!("the proxy's address is not a URL"))
}

/// `Basic …` of the user and password, as Go's transport sends them.
fn basic((user, password): &(String, Option<String>)) -> Result<HeaderValue> {
    let credentials = format!("{user}:{}", password.as_deref().unwrap_or_default());
    let mut value = HeaderValue::from_str(&format!("Basic {}", STANDARD.encode(credentials)))
        .map_err(|_| anyhow!("the proxy's user and password cannot be sent"))?;
    value.set_sensitive(true);
    Ok(value)
}

/// `uri` with its port written out.
fn with_port(uri: &Uri) -> Result<Uri> {
    if uri.port().is_some() {
        return Ok(uri.clone());
    }
    let port = if uri.scheme_str() == Some("https") {
        443
    } else {
        80
    };
    let mut parts = uri.clone().into_parts();
    let host = uri.host().unwrap_or_default();
    parts.authority = Some(
        format!("{host}:{port}")
            .parse()
            .map_err(|_| anyhow!("the server's URL has no host"))?,
    );
    Uri::from_parts(parts).map_err(|_| anyhow!("the server's URL has no host"))
}

/// TLS as kube configures it for `config` (the cluster's CA, client
/// certificate, `tls-server-name`), over `connector`; plain for `http://`.
fn tls<C>(config: &Config, connector: C) -> Result<hyper_rustls::HttpsConnector<C>> {
    config
        .rustls_https_connector_with_connector(connector)
        .map_err(configuring)
}

/// kube's layers over a client of `connector`.
fn finish<C>(config: &Config, connector: C) -> Result<Client>
where
    C: Connect + Clone + Send + Sync + 'static,
{
    let client: hyper_util::client::legacy::Client<C, Body> =
        hyper_util::client::legacy::Client::builder(TokioExecutor::new()).build(connector);
    let service = ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(config.auth_layer().map_err(configuring)?)
        .layer(config.extra_headers_layer().map_err(configuring)?)
        .map_err(BoxError::from)
        .service(client);
    Ok(Client::new(service, config.default_namespace.clone()))
}

/// Not kube's error chain, which repeats every message once per level.
fn configuring(error: kube::Error) -> anyhow::Error {
    match error {
        // It reads the user's client key only now.
        kube::Error::InferKubeconfig(error) => {
            anyhow!("configuring the client: {}", kubeconfig::describe(&error))
        }
        error => anyhow!("configuring the client: {error}"),
    }
}

/// Connects every request for an `http://` server to the proxy, marked as
/// proxied: hyper then writes it in absolute form, as to a forward proxy.
#[derive(Clone)]
struct Forward<C> {
    proxy: Uri,
    inner: C,
}

type Connecting<T, E> = Pin<Box<dyn Future<Output = Result<T, E>> + Send>>;

impl<C> Service<Uri> for Forward<C>
where
    C: Service<Uri>,
    C::Future: Send + 'static,
{
    type Response = Proxied<C::Response>;
    type Error = C::Error;
    type Future = Connecting<Self::Response, Self::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, _server: Uri) -> Self::Future {
        let connecting = self.inner.call(self.proxy.clone());
        Box::pin(async move { connecting.await.map(Proxied) })
    }
}

/// A connection to a forward proxy.
struct Proxied<T>(T);

impl<T: Connection> Connection for Proxied<T> {
    fn connected(&self) -> Connected {
        self.0.connected().proxy(true)
    }
}

impl<T: Read + Unpin> Read for Proxied<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_read(cx, buf)
    }
}

impl<T: Write + Unpin> Write for Proxied<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write_vectored(cx, bufs)
    }
}

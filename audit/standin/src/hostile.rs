//! Hostile answers: what a broken or malicious API server, or whatever
//! answers in its place (a proxy, a login page), sends. Each is set on one
//! path with [`Cluster::hostile`] and answers every request to that path,
//! whatever its query; the rest of the cluster is served as usual. And
//! authentication: with [`Cluster::require_token`], a request without that
//! bearer token or a client certificate of the stand-in's authority gets
//! `401 Unauthorized`, as from a real API server.
//!
//! Large bodies are streamed as they are written, never held whole, so a
//! test of a 300 MB page costs the stand-in nothing.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use futures::stream;
use serde_json::{Value, json};

use crate::Cluster;

/// One way of answering badly.
pub enum Hostile {
    /// Never answers: the connection stays open and silent.
    Silent,
    /// Answers 200 at once, sends `head`, then one space every `interval`,
    /// forever: each read gets a byte, the body never ends.
    Trickle { head: String, interval: Duration },
    /// Answers `status` with these headers and this body.
    Answer {
        status: u16,
        headers: Vec<(&'static str, String)>,
        body: String,
    },
    /// Answers 200 with `head`, then `fill` repeated `len` times, then `tail`.
    Large {
        head: String,
        fill: u8,
        len: usize,
        tail: String,
    },
    /// A list of `kind` whose every page holds `items` and a `continue`
    /// token, looping as `how` says.
    Endless {
        kind: String,
        items: Vec<Value>,
        how: Loop,
        pages: AtomicUsize,
    },
}

/// How an endless list loops.
#[derive(Clone, Copy)]
pub enum Loop {
    /// The same page, with the same `continue` token, every time.
    SameToken,
    /// The same items with a new token each time: the list starts over.
    SameItems,
    /// New items (their names suffixed with the page's number) and a new
    /// token each time: the list never ends.
    NewItems,
}

impl Hostile {
    /// 200 with a JSON `body`.
    pub fn ok(body: Value) -> Self {
        Self::Answer {
            status: 200,
            headers: vec![("content-type", "application/json".to_owned())],
            body: body.to_string(),
        }
    }

    /// 200 with this body, exactly as written (duplicate keys and all).
    pub fn raw(body: &str) -> Self {
        Self::Answer {
            status: 200,
            headers: vec![("content-type", "application/json".to_owned())],
            body: body.to_owned(),
        }
    }

    /// A redirect to `location`, as a login portal or a misdirected proxy answers.
    pub fn redirect(location: &str) -> Self {
        Self::Answer {
            status: 302,
            headers: vec![("location", location.to_owned())],
            body: String::new(),
        }
    }

    /// An empty list of `kind`, padded with an ignored field to `bytes` bytes.
    pub fn huge_page(kind: &str, bytes: usize) -> Self {
        let head = format!(
            r#"{{"kind":"{kind}","apiVersion":"v1","metadata":{{}},"items":[],"padding":""#
        );
        let tail = "\"}".to_owned();
        Self::Large {
            len: bytes.saturating_sub(head.len() + tail.len()),
            head,
            fill: b'x',
            tail,
        }
    }

    /// A list of `kind` with one HPA in `namespace` whose name is `bytes` long.
    pub fn huge_name(kind: &str, namespace: &str, bytes: usize) -> Self {
        Self::Large {
            head: format!(r#"{{"kind":"{kind}","apiVersion":"v1","metadata":{{}},"items":[{{"metadata":{{"namespace":"{namespace}","name":""#),
            fill: b'a',
            len: bytes,
            tail: r#""},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":1,"maxReplicas":3}}]}"#.to_owned(),
        }
    }

    /// A list of `kind` that never ends: `items` on every page, looping as
    /// `how` says.
    pub fn endless(kind: &str, items: Vec<Value>, how: Loop) -> Self {
        Self::Endless {
            kind: kind.to_owned(),
            items,
            how,
            pages: AtomicUsize::new(0),
        }
    }

    async fn answer(&self) -> Response {
        match self {
            Hostile::Silent => std::future::pending().await,
            Hostile::Trickle { head, interval } => {
                let head = Bytes::from(head.clone());
                let interval = *interval;
                let spaces = stream::unfold((), move |()| async move {
                    tokio::time::sleep(interval).await;
                    Some((Bytes::from_static(b" "), ()))
                });
                let body = stream::iter([head])
                    .chain(spaces)
                    .map(Ok::<_, std::io::Error>);
                json_body(Body::from_stream(body))
            }
            Hostile::Answer {
                status,
                headers,
                body,
            } => {
                let mut response = Response::new(Body::from(body.clone()));
                *response.status_mut() =
                    StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                for (name, value) in headers {
                    if let Ok(value) = HeaderValue::from_str(value) {
                        response
                            .headers_mut()
                            .insert(HeaderName::from_static(name), value);
                    }
                }
                response
            }
            Hostile::Large {
                head,
                fill,
                len,
                tail,
            } => {
                const CHUNK: usize = 64 * 1024;
                let len = *len;
                let chunk = Bytes::from(vec![*fill; CHUNK]);
                let fills = (0..len.div_ceil(CHUNK))
                    .map(move |i| chunk.slice(..CHUNK.min(len - i * CHUNK)));
                let parts = [Bytes::from(head.clone())]
                    .into_iter()
                    .chain(fills)
                    .chain([Bytes::from(tail.clone())]);
                json_body(Body::from_stream(stream::iter(
                    parts.map(Ok::<_, std::io::Error>),
                )))
            }
            Hostile::Endless {
                kind,
                items,
                how,
                pages,
            } => {
                let page = pages.fetch_add(1, Ordering::Relaxed);
                let token = match how {
                    Loop::SameToken => "hostile-again".to_owned(),
                    Loop::SameItems | Loop::NewItems => format!("hostile-{page}"),
                };
                let mut items = items.clone();
                if let Loop::NewItems = how {
                    for item in &mut items {
                        if let Some(name) = item["metadata"]["name"].as_str() {
                            item["metadata"]["name"] = json!(format!("{name}-{page}"));
                        }
                    }
                }
                let body = json!({"kind": kind, "apiVersion": "v1",
                    "metadata": {"continue": token, "remainingItemCount": 1}, "items": items});
                json_body(Body::from(body.to_string()))
            }
        }
    }
}

fn json_body(body: Body) -> Response {
    ([(CONTENT_TYPE, "application/json")], body).into_response()
}

/// The hostile answers of a cluster, and the token it requires.
#[derive(Default)]
pub(crate) struct Rules {
    paths: HashMap<String, Hostile>,
    token: Option<String>,
}

impl Rules {
    /// The answer to a request for `path` with these headers, on a
    /// connection with a client `certificate` or not, when it is not the
    /// cluster's usual one.
    pub(crate) async fn answer(
        &self,
        path: &str,
        headers: &HeaderMap,
        certificate: bool,
    ) -> Option<Response> {
        if let Some(token) = self.token.as_ref().filter(|_| !certificate) {
            let sent = headers.get(AUTHORIZATION).map(HeaderValue::as_bytes);
            if sent != Some(format!("Bearer {token}").as_bytes()) {
                let body = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": "Unauthorized", "reason": "Unauthorized", "code": 401});
                return Some(
                    (
                        StatusCode::UNAUTHORIZED,
                        [(CONTENT_TYPE, "application/json")],
                        body.to_string(),
                    )
                        .into_response(),
                );
            }
        }
        Some(self.paths.get(path)?.answer().await)
    }
}

impl Cluster {
    /// Every request to `path` (e.g. `/version`,
    /// `/apis/autoscaling/v2/horizontalpodautoscalers`) gets this answer.
    pub fn hostile(&mut self, path: &str, hostile: Hostile) -> &mut Self {
        self.hostile.paths.insert(path.to_owned(), hostile);
        self
    }

    /// Requests without `Authorization: Bearer <token>` (or a client
    /// certificate, over TLS) get `401 Unauthorized`.
    pub fn require_token(&mut self, token: &str) -> &mut Self {
        self.hostile.token = Some(token.to_owned());
        self
    }
}

//! Which proxy a connection to a server goes through, chosen as kubectl
//! chooses: client-go takes a kubeconfig cluster's `proxy-url` as given,
//! for every server and whatever `NO_PROXY` says ([`for_cluster`]), and
//! otherwise Go's `http.ProxyFromEnvironment` ([`from_environment`], a port of
//! `golang.org/x/net/http/httpproxy` as Go 1.26 vendors it):
//!
//! - `HTTPS_PROXY` (else `https_proxy`) for `https://` servers, `HTTP_PROXY`
//!   (else `http_proxy`) for `http://` servers, never the other;
//! - a value without a scheme or host is read as `http://VALUE`; a value
//!   that is not a URL even then is ignored, as Go ignores it;
//! - `localhost` and loopback addresses are never proxied;
//! - `NO_PROXY` (else `no_proxy`) lists, comma-separated: `*` (nothing is
//!   proxied), IP addresses and CIDRs, and domains, each with an optional
//!   `:port`; `example.com` and `*.example.com`... see [`NoProxy`];
//! - with `REQUEST_METHOD` set (a CGI program, whose `HTTP_PROXY` a client
//!   can set through a `Proxy:` header), `HTTP_PROXY` is refused.
//!
//! Pure: the environment is read by [`Environment::from_env`] only, and
//! nothing here connects anywhere. A [`ProxyUrl`] never shows its user
//! name or password when displayed.
//!
//! Two details of client-go are not followed: its `NewProxierWithNoProxyCIDR`
//! also reads CIDRs written with leading zeros (`010.0.0.0/8`), which Go's
//! own parser rejects, for servers with a TLS configuration of their own;
//! and non-ASCII names are brought to their ASCII form (IDNA) by lowercasing
//! and Punycode only, without the rest of Unicode's mapping.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The proxy variables of the environment, as Go's
/// `httpproxy.FromEnvironment` reads them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Environment {
    /// `HTTP_PROXY`, else `http_proxy`: for `http://` servers.
    pub http_proxy: String,
    /// `HTTPS_PROXY`, else `https_proxy`: for `https://` servers.
    pub https_proxy: String,
    /// `NO_PROXY`, else `no_proxy`.
    pub no_proxy: String,
    /// Whether `REQUEST_METHOD` is set: a CGI program.
    pub cgi: bool,
}

impl Environment {
    /// The process's environment.
    pub fn from_env() -> Self {
        Self::from_lookup(|name| {
            std::env::var_os(name).map(|value| value.to_string_lossy().into_owned())
        })
    }

    /// The environment `get` gives, by variable name. An empty value is
    /// no value: the lowercase name is read then.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Self {
        let any = |names: [&str; 2]| {
            names
                .into_iter()
                .find_map(|name| get(name).filter(|value| !value.is_empty()))
                .unwrap_or_default()
        };
        Self {
            http_proxy: any(["HTTP_PROXY", "http_proxy"]),
            https_proxy: any(["HTTPS_PROXY", "https_proxy"]),
            no_proxy: any(["NO_PROXY", "no_proxy"]),
            cgi: get("REQUEST_METHOD").is_some_and(|value| !value.is_empty()),
        }
    }
}

/// The server a connection is for.
#[derive(Clone, Copy, Debug)]
pub struct Server<'a> {
    /// `http` or `https`.
    pub scheme: &'a str,
    /// The host as the URL names it, an IPv6 address without brackets.
    pub host: &'a str,
    /// The port, when the URL gives one.
    pub port: Option<u16>,
}

/// A proxy's URL, read as Go's `net/url` reads it. Shown (`{}` or `{:?}`)
/// without its user name and password.
#[derive(Clone, PartialEq, Eq)]
pub struct ProxyUrl {
    /// Lowercase: `http`, `https`, `socks5`, … (any, as Go keeps it).
    pub scheme: String,
    /// The user information, percent-decoded: user name and password.
    pub user: Option<(String, Option<String>)>,
    /// The host, an IPv6 address without brackets; may be empty.
    pub host: String,
    /// The port as written (digits), when there is one.
    pub port: Option<String>,
}

impl ProxyUrl {
    /// The port to connect to: the one written, else the scheme's as Go's
    /// `net/http` has it (80, 443, 1080 for SOCKS). `None` when the written
    /// one is not a port or the scheme has none.
    pub fn port_number(&self) -> Option<u16> {
        match self.port.as_deref().filter(|port| !port.is_empty()) {
            Some(port) => port.parse().ok(),
            None => match self.scheme.as_str() {
                "http" => Some(80),
                "https" => Some(443),
                "socks5" | "socks5h" => Some(1080),
                _ => None,
            },
        }
    }

    /// `host:port` or `[v6]:port`, as an address to connect to.
    pub fn address(&self) -> Option<String> {
        Some(join_host_port(&self.host, &self.port_number()?.to_string()))
    }
}

impl fmt::Display for ProxyUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://", self.scheme)?;
        if self.user.is_some() {
            f.write_str("…@")?;
        }
        if self.host.contains(':') {
            write!(f, "[{}]", self.host)?;
        } else {
            f.write_str(&self.host)?;
        }
        match &self.port {
            Some(port) => write!(f, ":{port}"),
            None => Ok(()),
        }
    }
}

impl fmt::Debug for ProxyUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Why no proxy could be chosen. The messages quote no URL: a proxy URL
/// may hold a password.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The cluster's `proxy-url` is not a URL (client-go: "could not parse").
    NotAUrl,
    /// The cluster's `proxy-url` has a scheme client-go refuses.
    Scheme(String),
    /// `HTTP_PROXY` would be used by a CGI program.
    Cgi,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NotAUrl => f.write_str("the cluster's proxy-url is not a URL"),
            Error::Scheme(scheme) => write!(
                f,
                "the cluster's proxy-url has the scheme `{scheme}`: it must be http, https or socks5"
            ),
            Error::Cgi => f.write_str(
                "refusing to use $HTTP_PROXY where $REQUEST_METHOD is set, as in a CGI program (see golang.org/s/cgihttpproxy)",
            ),
        }
    }
}

impl std::error::Error for Error {}

/// client-go's choice for a kubeconfig cluster: its `proxy-url` when it has
/// one (http, https or socks5; for every server, `NO_PROXY` not read), else
/// [`from_environment`].
pub fn for_cluster(
    server: &Server,
    proxy_url: Option<&str>,
    environment: &Environment,
) -> Result<Option<ProxyUrl>, Error> {
    match proxy_url.filter(|url| !url.is_empty()) {
        Some(url) => {
            let url = parse_url(url).ok_or(Error::NotAUrl)?;
            match url.scheme.as_str() {
                "http" | "https" | "socks5" => Ok(Some(url)),
                other => Err(Error::Scheme(other.to_owned())),
            }
        }
        None => from_environment(server, environment),
    }
}

/// Go's `http.ProxyFromEnvironment`: the proxy the environment names for
/// `server`, unless `NO_PROXY` (or the loopback rule) exempts it.
pub fn from_environment(
    server: &Server,
    environment: &Environment,
) -> Result<Option<ProxyUrl>, Error> {
    let proxy = match server.scheme {
        "https" => parse_proxy(&environment.https_proxy),
        "http" => {
            let proxy = parse_proxy(&environment.http_proxy);
            if proxy.is_some() && environment.cgi {
                return Err(Error::Cgi);
            }
            proxy
        }
        _ => None,
    };
    let Some(proxy) = proxy else {
        return Ok(None);
    };
    let host = idna_ascii(server.host);
    let port = match server.port {
        Some(port) => port.to_string(),
        None => match server.scheme {
            "http" => "80".to_owned(),
            "https" => "443".to_owned(),
            _ => String::new(),
        },
    };
    let uses = NoProxy::parse(&environment.no_proxy).use_proxy(&join_host_port(&host, &port));
    Ok(uses.then_some(proxy))
}

/// Go's `httpproxy.parseProxy`: a value that is not a URL with a scheme
/// and a host is tried as `http://VALUE`; what is not a URL even then is no
/// proxy.
fn parse_proxy(value: &str) -> Option<ProxyUrl> {
    if value.is_empty() {
        return None;
    }
    match parse_url(value) {
        Some(url) if !url.scheme.is_empty() && !url.host.is_empty() => Some(url),
        first => parse_url(&format!("http://{value}")).or(first),
    }
}

/// The parts of Go's `url.Parse` a proxy URL needs: `None` where it fails.
fn parse_url(text: &str) -> Option<ProxyUrl> {
    if text.bytes().any(|byte| byte < 0x20 || byte == 0x7f) {
        return None;
    }
    let (text, fragment) = text.split_once('#').unwrap_or((text, ""));
    let (scheme, rest) = split_scheme(text)?;
    let rest = rest.split_once('?').map_or(rest, |(before, _)| before);
    let mut url = ProxyUrl {
        scheme: scheme.to_ascii_lowercase(),
        user: None,
        host: String::new(),
        port: None,
    };
    decode(fragment)?;
    if !scheme.is_empty() && !rest.starts_with('/') {
        // `scheme:opaque`: no host.
        return Some(url);
    }
    if scheme.is_empty() {
        let segment = rest.split('/').next().unwrap_or_default();
        if segment.contains(':') {
            // "first path segment in URL cannot contain colon"
            return None;
        }
    }
    let authority = rest
        .strip_prefix("//")
        .filter(|_| !scheme.is_empty() || !rest.starts_with("///"));
    let mut path = rest;
    if let Some(authority) = authority {
        let (authority, after) = authority
            .find('/')
            .map_or((authority, ""), |slash| authority.split_at(slash));
        path = after;
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((userinfo, hostport)) => (Some(userinfo), hostport),
            None => (None, authority),
        };
        (url.host, url.port) = parse_host(hostport)?;
        if let Some(userinfo) = userinfo {
            url.user = Some(parse_userinfo(userinfo)?);
        }
    }
    decode(path)?;
    Some(url)
}

/// Go's `getScheme`: the scheme and the rest, the scheme empty when there
/// is none; `None` for a leading colon.
fn split_scheme(text: &str) -> Option<(&str, &str)> {
    for (i, byte) in text.bytes().enumerate() {
        match byte {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return None,
            b':' => return Some((&text[..i], &text[i + 1..])),
            _ => return Some(("", text)),
        }
    }
    Some(("", text))
}

/// Go's `parseHost`: host (without brackets, percent-decoded) and port.
fn parse_host(hostport: &str) -> Option<(String, Option<String>)> {
    let (host, port) = if let Some(bracketed) = hostport.strip_prefix('[') {
        let end = bracketed.rfind(']')?;
        (&bracketed[..end], &bracketed[end + 1..])
    } else {
        match hostport.rfind(':') {
            Some(i) => (&hostport[..i], &hostport[i..]),
            None => (hostport, ""),
        }
    };
    let port = match port {
        "" => None,
        port => {
            let digits = port.strip_prefix(':')?;
            if !digits.bytes().all(|byte| byte.is_ascii_digit()) {
                return None;
            }
            Some(digits.to_owned())
        }
    };
    let allowed = |byte: u8| {
        byte >= 0x80 || byte.is_ascii_alphanumeric() || b"-_.~!$&'()*+,;=:[]<>\"%".contains(&byte)
    };
    if !host.bytes().all(allowed) {
        return None;
    }
    Some((unescape(host)?, port))
}

/// Go's `parseAuthority` for the user information: user name and password,
/// percent-decoded.
fn parse_userinfo(userinfo: &str) -> Option<(String, Option<String>)> {
    let allowed = |byte: u8| byte.is_ascii_alphanumeric() || b"-._:~!$&'()*+,;=%@".contains(&byte);
    if !userinfo.bytes().all(allowed) {
        return None;
    }
    Some(match userinfo.split_once(':') {
        Some((user, password)) => (unescape(user)?, Some(unescape(password)?)),
        None => (unescape(userinfo)?, None),
    })
}

/// Percent-decoding to text; `None` for a `%` without two hex digits or
/// bytes that are not UTF-8.
fn unescape(text: &str) -> Option<String> {
    String::from_utf8(decode(text)?).ok()
}

/// Percent-decoding; `None` for a `%` without two hex digits.
fn decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            if !hex.iter().all(u8::is_ascii_hexdigit) {
                return None;
            }
            out.push(u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

/// Go's `net.JoinHostPort`.
fn join_host_port(host: &str, port: &str) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// Go's `net.SplitHostPort`.
fn split_host_port(hostport: &str) -> Option<(&str, &str)> {
    let colon = hostport.rfind(':')?;
    let (host, inner_start, inner_end) = if hostport.starts_with('[') {
        let end = hostport.find(']')?;
        if end + 1 != colon {
            return None;
        }
        (&hostport[1..end], 1, end + 1)
    } else {
        let host = &hostport[..colon];
        if host.contains(':') {
            return None;
        }
        (host, 0, 0)
    };
    if hostport[inner_start..].contains('[') || hostport[inner_end..].contains(']') {
        return None;
    }
    Some((host, &hostport[colon + 1..]))
}

/// Go's `netip.ParseAddr`, with an IPv4 address in IPv6 (`::ffff:a.b.c.d`)
/// taken as the IPv4 address, as `net.IP` compares them.
fn parse_addr(text: &str) -> Option<IpAddr> {
    let ip = match text.split_once('%') {
        Some((address, zone)) if !zone.is_empty() => IpAddr::V6(address.parse().ok()?),
        Some(_) => return None,
        None => text.parse().ok()?,
    };
    Some(canonical(ip))
}

fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// Go's `net.ParseIP`: no zone.
fn parse_ip(text: &str) -> Option<IpAddr> {
    text.parse().ok().map(canonical)
}

/// An IP network (`net.ParseCIDR`), as `net.IPNet.Contains` reads it: an
/// IPv4 network in IPv6 of at least 96 bits is that IPv4 network.
#[derive(Clone, Copy, Debug)]
struct Cidr {
    network: IpAddr,
    bits: u8,
}

impl Cidr {
    fn parse(text: &str) -> Option<Self> {
        let (address, bits) = text.split_once('/')?;
        if bits.is_empty() || !bits.bytes().all(|byte| byte.is_ascii_digit()) {
            return None;
        }
        let bits: u8 = bits.parse().ok()?;
        let network = match address.parse().ok()? {
            IpAddr::V4(v4) if bits <= 32 => IpAddr::V4(mask_v4(v4, bits)),
            IpAddr::V6(v6) if bits <= 128 => {
                let masked = mask_v6(v6, bits);
                match masked.to_ipv4_mapped() {
                    Some(v4) if bits >= 96 => {
                        return Some(Self {
                            network: IpAddr::V4(v4),
                            bits: bits - 96,
                        });
                    }
                    _ => IpAddr::V6(masked),
                }
            }
            _ => return None,
        };
        Some(Self { network, bits })
    }

    fn contains(&self, ip: IpAddr) -> bool {
        match (self.network, ip) {
            (IpAddr::V4(network), IpAddr::V4(ip)) => mask_v4(ip, self.bits) == network,
            (IpAddr::V6(network), IpAddr::V6(ip)) => mask_v6(ip, self.bits) == network,
            _ => false,
        }
    }
}

fn mask_v4(ip: Ipv4Addr, bits: u8) -> Ipv4Addr {
    let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
    Ipv4Addr::from(u32::from(ip) & mask)
}

fn mask_v6(ip: Ipv6Addr, bits: u8) -> Ipv6Addr {
    let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
    Ipv6Addr::from(u128::from(ip) & mask)
}

/// One entry of `NO_PROXY` that is not `*`.
#[derive(Clone, Debug)]
enum Exemption {
    Network(Cidr),
    /// An address, and the port when one is written.
    Address(IpAddr, String),
    /// `.example.com`, the port when one is written, and whether the
    /// entry had no leading dot (`example.com` matches itself too).
    Domain {
        suffix: String,
        port: String,
        itself: bool,
    },
}

/// `NO_PROXY`, read as Go's `httpproxy` reads it: entries separated by
/// commas, white space around them ignored, case ignored; `*` exempts
/// everything; `10.0.0.0/8` and `fd00::/8` exempt networks; `10.1.2.3`,
/// `10.1.2.3:443`, `::1`, `[::1]:443` addresses (on that port);
/// `example.com` exempts it and its subdomains, `.example.com` and
/// `*.example.com` its subdomains only, each optionally on one port (`:443`).
/// A name never exempts an IP address. Malformed entries are ignored.
#[derive(Clone, Debug, Default)]
struct NoProxy {
    everything: bool,
    exemptions: Vec<Exemption>,
}

impl NoProxy {
    /// Reads a `NO_PROXY` value.
    fn parse(value: &str) -> Self {
        let mut no_proxy = Self::default();
        for entry in value.split(',') {
            let entry = entry.trim().to_lowercase();
            if entry.is_empty() {
                continue;
            }
            if entry == "*" {
                return Self {
                    everything: true,
                    exemptions: Vec::new(),
                };
            }
            if let Some(network) = Cidr::parse(&entry) {
                no_proxy.exemptions.push(Exemption::Network(network));
                continue;
            }
            let (host, port) = match split_host_port(&entry) {
                // No host: malformed, ignored.
                Some(("", _)) => continue,
                Some((host, port)) => (host, port),
                None => (entry.as_str(), ""),
            };
            if let Some(ip) = parse_ip(host) {
                no_proxy
                    .exemptions
                    .push(Exemption::Address(ip, port.to_owned()));
                continue;
            }
            let host = host
                .strip_prefix('*')
                .filter(|h| h.starts_with('.'))
                .unwrap_or(host);
            let (suffix, itself) = match host.strip_prefix('.') {
                Some(_) => (host.to_owned(), false),
                None => (format!(".{host}"), true),
            };
            no_proxy.exemptions.push(Exemption::Domain {
                suffix: idna_ascii(&suffix),
                port: port.to_owned(),
                itself,
            });
        }
        no_proxy
    }

    /// Go's `useProxy`: whether a connection to `host:port` goes through
    /// the proxy.
    fn use_proxy(&self, address: &str) -> bool {
        let Some((host, port)) = split_host_port(address) else {
            return false;
        };
        if host == "localhost" {
            return false;
        }
        let ip = parse_addr(host);
        if ip.is_some_and(|ip| ip.is_loopback()) {
            return false;
        }
        if self.everything {
            return false;
        }
        let host = host.trim().to_lowercase();
        let port_matches = |wanted: &str| wanted.is_empty() || wanted == port;
        !self
            .exemptions
            .iter()
            .any(|exemption| match (exemption, ip) {
                (Exemption::Network(network), Some(ip)) => network.contains(ip),
                (Exemption::Address(address, wanted), Some(ip)) => {
                    *address == ip && port_matches(wanted)
                }
                (
                    Exemption::Domain {
                        suffix,
                        port: wanted,
                        itself,
                    },
                    None,
                ) => {
                    (host.ends_with(suffix.as_str()) || (*itself && host == suffix[1..]))
                        && port_matches(wanted)
                }
                _ => false,
            })
    }
}

/// Go's `idnaASCII`: ASCII text as it is; other text lowercased, each
/// non-ASCII label as `xn--` and its Punycode.
fn idna_ascii(text: &str) -> String {
    if text.is_ascii() {
        return text.to_owned();
    }
    let lower = text.to_lowercase();
    let labels: Option<Vec<String>> = lower
        .split('.')
        .map(|label| {
            if label.is_ascii() {
                Some(label.to_owned())
            } else {
                punycode(label).map(|code| format!("xn--{code}"))
            }
        })
        .collect();
    labels.map_or_else(|| text.to_owned(), |labels| labels.join("."))
}

/// RFC 3492 Punycode encoding of one label; `None` on overflow.
fn punycode(label: &str) -> Option<String> {
    const BASE: u32 = 36;
    const T_MIN: u32 = 1;
    const T_MAX: u32 = 26;
    const SKEW: u32 = 38;
    const DAMP: u32 = 700;
    let adapt = |delta: u32, points: u32, first: bool| {
        let mut delta = if first { delta / DAMP } else { delta / 2 };
        delta += delta / points;
        let mut k = 0;
        while delta > ((BASE - T_MIN) * T_MAX) / 2 {
            delta /= BASE - T_MIN;
            k += BASE;
        }
        k + (BASE - T_MIN + 1) * delta / (delta + SKEW)
    };
    let digit = |d: u32| {
        char::from(if d < 26 {
            b'a' + d as u8
        } else {
            b'0' + (d - 26) as u8
        })
    };
    let input: Vec<u32> = label.chars().map(u32::from).collect();
    let mut output: String = label.chars().filter(char::is_ascii).collect();
    let basic = output.len();
    if basic > 0 {
        output.push('-');
    }
    let (mut n, mut delta, mut bias, mut handled) = (128u32, 0u32, 72u32, basic);
    while handled < input.len() {
        let next = input.iter().copied().filter(|&c| c >= n).min()?;
        let count = u32::try_from(handled + 1).ok()?;
        delta = delta.checked_add((next - n).checked_mul(count)?)?;
        n = next;
        for &c in &input {
            if c < n {
                delta = delta.checked_add(1)?;
            }
            if c == n {
                let mut q = delta;
                let mut k = BASE;
                loop {
                    let t = if k <= bias {
                        T_MIN
                    } else if k >= bias + T_MAX {
                        T_MAX
                    } else {
                        k - bias
                    };
                    if q < t {
                        break;
                    }
                    output.push(digit(t + (q - t) % (BASE - t)));
                    q = (q - t) / (BASE - t);
                    k += BASE;
                }
                output.push(digit(q));
                bias = adapt(delta, u32::try_from(handled + 1).ok()?, handled == basic);
                delta = 0;
                handled += 1;
            }
        }
        delta = delta.checked_add(1)?;
        n = n.checked_add(1)?;
    }
    Some(output)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `scheme`, host (brackets removed, `%25` decoded as Go's
    /// `URL.Hostname` does) and port of a request URL.
    fn server(url: &str) -> (&str, String, Option<u16>) {
        let (scheme, rest) = url.split_once("://").unwrap();
        let authority = rest.split('/').next().unwrap();
        let (host, port) = match authority.strip_prefix('[') {
            Some(bracketed) => {
                let (host, port) = bracketed.split_once(']').unwrap();
                (host.replace("%25", "%"), port.strip_prefix(':'))
            }
            None => match authority.rsplit_once(':') {
                Some((host, port)) => (host.to_owned(), Some(port)),
                None => (authority.to_owned(), None),
            },
        };
        (scheme, host, port.map(|port| port.parse().unwrap()))
    }

    fn proxy_for(environment: &Environment, url: &str) -> Result<Option<ProxyUrl>, Error> {
        let (scheme, host, port) = server(url);
        let server = Server {
            scheme,
            host: &host,
            port,
        };
        from_environment(&server, environment)
    }

    fn environment(http: &str, https: &str, no_proxy: &str, cgi: bool) -> Environment {
        Environment {
            http_proxy: http.to_owned(),
            https_proxy: https.to_owned(),
            no_proxy: no_proxy.to_owned(),
            cgi,
        }
    }

    /// golang.org/x/net/http/httpproxy, proxy_test.go: `proxyForURLTests`
    /// (run by `TestProxyForURL`), in its order. `<nil>` is no proxy.
    #[test]
    fn proxy_for_url_as_go() {
        let cases: &[(&str, &str, &str, bool, &str, &str)] = &[
            // (HTTPProxy, HTTPSProxy, NoProxy, CGI, req, want)
            ("127.0.0.1:8080", "", "", false, "", "http://127.0.0.1:8080"),
            (
                "cache.corp.example.com:1234",
                "",
                "",
                false,
                "",
                "http://cache.corp.example.com:1234",
            ),
            (
                "cache.corp.example.com",
                "",
                "",
                false,
                "",
                "http://cache.corp.example.com",
            ),
            // A single label is read as a scheme by url.Parse.
            ("localhost", "", "", false, "", "http://localhost"),
            (
                "https://cache.corp.example.com",
                "",
                "",
                false,
                "",
                "https://cache.corp.example.com",
            ),
            (
                "http://127.0.0.1:8080",
                "",
                "",
                false,
                "",
                "http://127.0.0.1:8080",
            ),
            (
                "https://127.0.0.1:8080",
                "",
                "",
                false,
                "",
                "https://127.0.0.1:8080",
            ),
            (
                "socks5://127.0.0.1",
                "",
                "",
                false,
                "",
                "socks5://127.0.0.1",
            ),
            // Unknown schemes are kept.
            ("foo://host", "", "", false, "", "foo://host"),
            // HTTPS_PROXY is not used for http, HTTP_PROXY not for https.
            (
                "http.proxy.tld",
                "secure.proxy.tld",
                "",
                false,
                "http://insecure.tld/",
                "http://http.proxy.tld",
            ),
            (
                "http.proxy.tld",
                "secure.proxy.tld",
                "",
                false,
                "https://secure.tld/",
                "http://secure.proxy.tld",
            ),
            (
                "http.proxy.tld",
                "https://secure.proxy.tld",
                "",
                false,
                "https://secure.tld/",
                "https://secure.proxy.tld",
            ),
            (
                "http.proxy.tld",
                "",
                "",
                false,
                "https://secure.tld/",
                "<nil>",
            ),
            (
                "http.proxy.tld",
                "",
                "",
                false,
                "ftp://insecure.tld/",
                "<nil>",
            ),
            // The HTTPS proxy is still used by a CGI program.
            (
                "",
                "https://secure.proxy.tld",
                "",
                true,
                "https://secure.tld/",
                "https://secure.proxy.tld",
            ),
            ("", "", "", false, "", "<nil>"),
            (
                "proxy",
                "",
                "example.com",
                false,
                "http://example.com/",
                "<nil>",
            ),
            (
                "proxy",
                "",
                ".example.com",
                false,
                "http://example.com/",
                "http://proxy",
            ),
            (
                "proxy",
                "",
                "ample.com",
                false,
                "http://example.com/",
                "http://proxy",
            ),
            (
                "proxy",
                "",
                "example.com",
                false,
                "http://foo.example.com/",
                "<nil>",
            ),
            (
                "proxy",
                "",
                ".foo.com",
                false,
                "http://example.com/",
                "http://proxy",
            ),
            (
                "proxy",
                "",
                ".示例.com",
                false,
                "http://www.示例.com",
                "<nil>",
            ),
            (
                "proxy",
                "",
                "xn--fsq092h.com",
                false,
                "http://www.示例.com",
                "<nil>",
            ),
            (
                "proxy",
                "",
                "示例.com",
                false,
                "http://www.xn--fsq092h.com",
                "<nil>",
            ),
            // An IPv6 zone is not a name (CVE-2025-22870).
            (
                "proxy",
                "",
                "example.com",
                false,
                "http://[1000::%25.example.com]:123",
                "http://proxy",
            ),
        ];
        for &(http, https, no_proxy, cgi, request, want) in cases {
            let request = if request.is_empty() {
                "http://example.com"
            } else {
                request
            };
            let got = proxy_for(&environment(http, https, no_proxy, cgi), request).unwrap();
            let got = got.map_or_else(|| "<nil>".to_owned(), |url| url.to_string());
            assert_eq!(
                got, want,
                "http_proxy={http:?} https_proxy={https:?} no_proxy={no_proxy:?} req={request:?}"
            );
        }
        // Issue 16405: HTTP_PROXY is refused in a CGI program, where a
        // client can set it.
        let cgi = environment("http://10.1.2.3:8080", "", "", true);
        assert_eq!(proxy_for(&cgi, "http://example.com"), Err(Error::Cgi));
    }

    /// proxy_test.go: `TestFromEnvironment`,
    /// `TestFromEnvironmentWithRequestMethod`, `TestFromEnvironmentLowerCase`.
    #[test]
    fn reads_the_environment_as_go() {
        let lookup = |vars: &[(&str, &str)]| {
            Environment::from_lookup(|name| {
                vars.iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| (*v).to_owned())
            })
        };
        let upper = [
            ("HTTP_PROXY", "httpproxy"),
            ("HTTPS_PROXY", "httpsproxy"),
            ("NO_PROXY", "noproxy"),
            ("REQUEST_METHOD", ""),
        ];
        assert_eq!(
            lookup(&upper),
            environment("httpproxy", "httpsproxy", "noproxy", false)
        );
        let cgi = [
            ("HTTP_PROXY", "httpproxy"),
            ("HTTPS_PROXY", "httpsproxy"),
            ("NO_PROXY", "noproxy"),
            ("REQUEST_METHOD", "PUT"),
        ];
        assert_eq!(
            lookup(&cgi),
            environment("httpproxy", "httpsproxy", "noproxy", true)
        );
        let lower = [
            ("http_proxy", "httpproxy"),
            ("https_proxy", "httpsproxy"),
            ("no_proxy", "noproxy"),
            ("REQUEST_METHOD", ""),
        ];
        assert_eq!(
            lookup(&lower),
            environment("httpproxy", "httpsproxy", "noproxy", false)
        );
        // The upper case wins; an empty value counts as none.
        let both = [
            ("HTTPS_PROXY", "upper"),
            ("https_proxy", "lower"),
            ("HTTP_PROXY", ""),
            ("http_proxy", "lower"),
        ];
        assert_eq!(lookup(&both), environment("lower", "upper", "", false));
    }

    /// proxy_test.go: `UseProxyTests` with its `noProxy` (`TestUseProxy`),
    /// the same with `*` (`TestAllNoProxy`), and `TestInvalidNoProxy`.
    #[test]
    fn no_proxy_matches_as_go() {
        let no_proxy = NoProxy::parse(
            "foobar.com, .barbaz.net, *.wildcard.io, 192.168.1.1, 192.168.1.2:81, 192.168.1.3:80, 10.0.0.0/30, 2001:db8::52:0:1, [2001:db8::52:0:2]:443, [2001:db8::52:0:3]:80, 2002:db8:a::45/64",
        );
        let cases = [
            // Never proxy localhost:
            ("localhost", false),
            ("127.0.0.1", false),
            ("127.0.0.2", false),
            ("[::1]", false),
            ("[::2]", true),                       // not a loopback address
            ("192.168.1.1", false),                // matches exact IPv4
            ("192.168.1.2", true),                 // ports do not match
            ("192.168.1.3", false),                // matches exact IPv4:port
            ("192.168.1.4", true),                 // no match
            ("10.0.0.2", false),                   // matches IPv4/CIDR
            ("[2001:db8::52:0:1]", false),         // matches exact IPv6
            ("[2001:db8::52:0:2]", true),          // no match
            ("[2001:db8::52:0:3]", false),         // matches exact [IPv6]:port
            ("[2002:db8:a::123]", false),          // matches IPv6/CIDR
            ("[fe80::424b:c8be:1643:a1b6]", true), // no match
            ("barbaz.net", true),                  // does not match as .barbaz.net
            ("www.barbaz.net", false),             // does match as .barbaz.net
            ("foobar.com", false),                 // does match as foobar.com
            ("www.foobar.com", false),             // match because NO_PROXY includes "foobar.com"
            ("foofoobar.com", true),               // not match as a part of foobar.com
            ("baz.com", true),                     // not match as a part of barbaz.com
            ("localhost.net", true),               // not match as suffix of address
            ("local.localhost", true),             // not match as prefix as address
            ("barbarbaz.net", true),               // not match, wrong domain
            ("wildcard.io", true),                 // does not match as *.wildcard.io
            ("nested.wildcard.io", false),         // match as *.wildcard.io
            ("awildcard.io", true),                // not a match because of '*'
        ];
        let everything = NoProxy::parse("*");
        for (host, proxied) in cases {
            let address = format!("{host}:80");
            assert_eq!(no_proxy.use_proxy(&address), proxied, "{host}");
            assert!(!everything.use_proxy(&address), "{host} with *");
        }
        // No host: ignored, without a panic.
        assert!(NoProxy::parse(":1").use_proxy("example.com:80"));
    }

    #[test]
    fn addresses_compare_as_go_net_ip() {
        // An IPv4 address in IPv6 is that IPv4 address, for the loopback
        // rule, addresses and networks alike.
        let no_proxy = NoProxy::parse("10.0.0.0/8, 192.0.2.1, ::ffff:198.51.100.0/120");
        assert!(!no_proxy.use_proxy("[::ffff:127.0.0.1]:443"));
        assert!(!no_proxy.use_proxy("[::ffff:10.1.2.3]:443"));
        assert!(!no_proxy.use_proxy("[::ffff:192.0.2.1]:443"));
        assert!(!no_proxy.use_proxy("198.51.100.7:443"));
        assert!(no_proxy.use_proxy("198.51.101.7:443"));
        // Entries are trimmed, lowercased and may be empty; a name is
        // compared in lowercase; "localhost" only as written.
        let no_proxy = NoProxy::parse(" Example.COM ,, ");
        assert!(!no_proxy.use_proxy("API.example.com:443"));
        assert!(no_proxy.use_proxy("LOCALHOST:443"));
        // Ports, and a leading zero that is not an address.
        let no_proxy = NoProxy::parse("api.corp:6443, 010.0.0.1");
        assert!(!no_proxy.use_proxy("api.corp:6443"));
        assert!(no_proxy.use_proxy("api.corp:443"));
        assert!(no_proxy.use_proxy("10.0.0.1:443"));
    }

    #[test]
    fn a_cluster_proxy_url_wins_as_client_go_takes_it() {
        let https = Server {
            scheme: "https",
            host: "127.0.0.1",
            port: Some(6443),
        };
        let everything = environment("http://env:1", "http://env:2", "*", true);
        // Used as given: loopback, NO_PROXY and CGI notwithstanding.
        let chosen = for_cluster(&https, Some("socks5://u:p%40ss@proxy.corp"), &everything)
            .unwrap()
            .unwrap();
        assert_eq!(chosen.to_string(), "socks5://…@proxy.corp");
        assert_eq!(chosen.user, Some(("u".to_owned(), Some("p@ss".to_owned()))));
        assert_eq!(chosen.address().as_deref(), Some("proxy.corp:1080"));
        // client-go's parseProxyURL: no `http://` added, three schemes.
        assert_eq!(
            for_cluster(&https, Some("proxy.corp:3128"), &everything),
            Err(Error::Scheme("proxy.corp".to_owned()))
        );
        assert_eq!(
            for_cluster(&https, Some("10.0.0.1:3128"), &everything),
            Err(Error::NotAUrl)
        );
        assert_eq!(
            for_cluster(&https, Some("socks5h://proxy"), &everything),
            Err(Error::Scheme("socks5h".to_owned()))
        );
        assert_eq!(
            for_cluster(&https, Some("http://a b"), &everything),
            Err(Error::NotAUrl)
        );
        // None or empty: the environment's.
        let env = environment("", "http://env:2", "", false);
        let from_env = for_cluster(&https, Some(""), &env).unwrap();
        assert_eq!(from_env, None, "loopback");
        let remote = Server {
            host: "10.0.0.1",
            ..https
        };
        assert_eq!(
            for_cluster(&remote, None, &env)
                .unwrap()
                .unwrap()
                .to_string(),
            "http://env:2"
        );
    }

    #[test]
    fn proxy_urls_read_as_go_net_url() {
        let url = parse_proxy("HTTP://us%3Aer:pa:ss@[fe80::1%25eth0]:3128/path?q#f").unwrap();
        assert_eq!(url.scheme, "http");
        assert_eq!(
            url.user,
            Some(("us:er".to_owned(), Some("pa:ss".to_owned())))
        );
        assert_eq!(url.host, "fe80::1%eth0");
        assert_eq!(url.to_string(), "http://…@[fe80::1%eth0]:3128");
        assert_eq!(format!("{url:?}"), "http://…@[fe80::1%eth0]:3128");
        // A user without a password; an empty port takes the scheme's.
        let url = parse_proxy("https://user@proxy:").unwrap();
        assert_eq!(
            (url.user.clone(), url.port_number()),
            (Some(("user".to_owned(), None)), Some(443))
        );
        assert_eq!(parse_proxy("proxy:99999").unwrap().port_number(), None);
        // Not a URL even with http://: no proxy, as Go ignores it.
        for bad in ["http://%zz", "http://proxy/%zz", "\u{7f}"] {
            assert_eq!(parse_proxy(bad), None, "{bad}");
        }
        // What Go makes of others: a URL without a host (which then fails
        // to connect), or `http://http://host:port`, the proxy `http:80`.
        assert_eq!(parse_proxy("a b").unwrap().host, "");
        let url = parse_proxy("http://host:port").unwrap();
        assert_eq!((url.host.as_str(), url.port_number()), ("http", Some(80)));
    }

    #[test]
    fn punycode_as_rfc_3492() {
        assert_eq!(punycode("示例").as_deref(), Some("fsq092h"));
        assert_eq!(punycode("bücher").as_deref(), Some("bcher-kva"));
        assert_eq!(idna_ascii("WWW.Bücher.de"), "www.xn--bcher-kva.de");
        assert_eq!(idna_ascii("plain.example"), "plain.example");
    }
}

//! SSRF protection for webfetch: which addresses a fetch may reach, judged before the
//! request and again when the connection is made.
//!
//! A URL is parsed with WHATWG rules (the `url` crate), the same rules browsers use, so
//! `http://0x7f.1/`, `http://2130706433/`, `http://017700000001/`, `http://127.1/` and
//! `http://[::ffff:127.0.0.1]/` all come out as the loopback address they are, and the host
//! is the one that parse yields (`http://evil@127.0.0.1/` goes to 127.0.0.1,
//! `http://127.0.0.1#@example.com` too). Userinfo and fragments are never sent; trailing
//! dots of a host name are removed before anything is resolved.
//!
//! Three layers judge the addresses:
//! 1. [`check_url`] refuses IP literals and `localhost`/`*.localhost` names (loopback by
//!    definition, never looked up) before any request; it runs for every redirect hop.
//! 2. [`GuardResolver`], the resolver of the HTTP agent, looks a name up once and refuses
//!    the host when **any** of its addresses is blocked.
//! 3. [`GuardConnector`], first in the connector chain, re-checks the very addresses the
//!    TCP connector is about to dial (those the resolver returned: there is no second
//!    lookup, so DNS rebinding has no window). Proxies are off, so nothing else resolves
//!    the target.
//!
//! Blocked ranges (first match names the range):
//!
//! | IPv4 | | IPv6 | |
//! |---|---|---|---|
//! | `0.0.0.0/8` | this network | `::/128` | unspecified |
//! | `10.0.0.0/8` | private | `::1/128` | loopback |
//! | `100.64.0.0/10` | shared (CGNAT) | `::ffff:0:0/96` | IPv4-mapped: the IPv4 is judged |
//! | `127.0.0.0/8` | loopback | `::ffff:0:0:0/96` | IPv4-translated: the IPv4 is judged |
//! | `169.254.0.0/16` | link-local, cloud metadata | `::/96` | IPv4-compatible: the IPv4 is judged |
//! | `172.16.0.0/12` | private | `64:ff9b::/96` | NAT64: the IPv4 is judged |
//! | `192.168.0.0/16` | private | `64:ff9b:1::/48` | local-use NAT64 |
//! | `198.18.0.0/15` | benchmarking | `2002::/16` | 6to4: the IPv4 is judged |
//! | `224.0.0.0/4` | multicast | `fc00::/7` | unique local |
//! | `255.255.255.255/32` | broadcast | `fe80::/10` | link-local |
//! | `240.0.0.0/4` | reserved | `fec0::/10` | site-local (deprecated) |
//! | | | `ff00::/8` | multicast |
//! | | | `2001::/32` | Teredo: the client's IPv4 (its low 32 bits inverted) and the server's are judged |
//! | | | `…:0:5efe:a.b.c.d` | ISATAP interface id, under any prefix: the IPv4 is judged |
//!
//! The only way to open a host is the user config's `webfetch.allow_hosts`: exact `host` or
//! `host:port` entries ([`AllowList`]); the project config cannot set it.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{ConnectionDetails, Connector, NextTimeout};
use url::{Host, Url};

/// The start of every refusal for a blocked address.
pub const BLOCKED_PREFIX: &str = "blocked: URL resolves to private/internal network address";

/// Blocked IPv4 ranges: network, prefix length, what it is. The first match names it.
#[rustfmt::skip]
const V4_RANGES: &[(Ipv4Addr, u8, &str)] = &[
    (Ipv4Addr::new(0, 0, 0, 0), 8, "0.0.0.0/8 this network"),
    (Ipv4Addr::new(10, 0, 0, 0), 8, "10.0.0.0/8 private"),
    (Ipv4Addr::new(100, 64, 0, 0), 10, "100.64.0.0/10 shared address space"),
    (Ipv4Addr::new(127, 0, 0, 0), 8, "127.0.0.0/8 loopback"),
    (Ipv4Addr::new(169, 254, 0, 0), 16, "169.254.0.0/16 link-local, cloud metadata"),
    (Ipv4Addr::new(172, 16, 0, 0), 12, "172.16.0.0/12 private"),
    (Ipv4Addr::new(192, 168, 0, 0), 16, "192.168.0.0/16 private"),
    (Ipv4Addr::new(198, 18, 0, 0), 15, "198.18.0.0/15 benchmarking"),
    (Ipv4Addr::new(224, 0, 0, 0), 4, "224.0.0.0/4 multicast"),
    (Ipv4Addr::new(255, 255, 255, 255), 32, "255.255.255.255/32 broadcast"),
    (Ipv4Addr::new(240, 0, 0, 0), 4, "240.0.0.0/4 reserved"),
];

/// How an IPv6 range is judged.
#[derive(Clone, Copy)]
enum V6Rule {
    /// Always blocked.
    Block,
    /// Carries an IPv4 address in its low 32 bits, which is judged instead.
    LowV4,
    /// 6to4: carries an IPv4 address in bits 16..48, which is judged instead.
    SixToFour,
    /// Teredo: the server's IPv4 in bits 32..64, the client's in the low 32 bits, every
    /// bit inverted; both are judged.
    Teredo,
}

/// IPv6 ranges: network, prefix length, what it is, how it is judged. The first match wins,
/// so `::` and `::1` come before `::/96`.
#[rustfmt::skip]
const V6_RANGES: &[(Ipv6Addr, u8, &str, V6Rule)] = &[
    (Ipv6Addr::UNSPECIFIED, 128, "::/128 unspecified", V6Rule::Block),
    (Ipv6Addr::LOCALHOST, 128, "::1/128 loopback", V6Rule::Block),
    (Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0, 0), 96, "::ffff:0:0/96 IPv4-mapped", V6Rule::LowV4),
    (Ipv6Addr::new(0, 0, 0, 0, 0xffff, 0, 0, 0), 96, "::ffff:0:0:0/96 IPv4-translated", V6Rule::LowV4),
    (Ipv6Addr::UNSPECIFIED, 96, "::/96 IPv4-compatible", V6Rule::LowV4),
    (Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96, "64:ff9b::/96 NAT64", V6Rule::LowV4),
    (Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0, 0), 48, "64:ff9b:1::/48 local-use NAT64", V6Rule::Block),
    (Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16, "2002::/16 6to4", V6Rule::SixToFour),
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 32, "2001::/32 Teredo", V6Rule::Teredo),
    (Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0), 7, "fc00::/7 unique local", V6Rule::Block),
    (Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0), 10, "fe80::/10 link-local", V6Rule::Block),
    (Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0), 10, "fec0::/10 site-local", V6Rule::Block),
    (Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0), 8, "ff00::/8 multicast", V6Rule::Block),
];

fn in_v4(ip: Ipv4Addr, net: Ipv4Addr, len: u8) -> bool {
    let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
    u32::from(ip) & mask == u32::from(net) & mask
}

fn in_v6(ip: Ipv6Addr, net: Ipv6Addr, len: u8) -> bool {
    let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
    u128::from(ip) & mask == u128::from(net) & mask
}

/// Why an address is blocked (`127.0.0.0/8 loopback`, `::ffff:0:0/96 IPv4-mapped,
/// embedding 10.0.0.1 in 10.0.0.0/8 private`), or `None` when it may be reached.
pub fn blocked_range(ip: IpAddr) -> Option<String> {
    match ip {
        IpAddr::V4(v4) => V4_RANGES
            .iter()
            .find(|(net, len, _)| in_v4(v4, *net, *len))
            .map(|(_, _, name)| (*name).to_string()),
        IpAddr::V6(v6) => {
            let bits = u128::from(v6);
            let judged = |name: &str, embedded: Ipv4Addr| {
                blocked_range(IpAddr::V4(embedded))
                    .map(|inner| format!("{name}, embedding {embedded} in {inner}"))
            };
            let Some((_, _, name, rule)) = V6_RANGES
                .iter()
                .find(|(net, len, _, _)| in_v6(v6, *net, *len))
            else {
                // An ISATAP interface id (`::0:5efe:a.b.c.d`, `::200:5efe:…`, the
                // universal/local and group bits either way) carries an IPv4 under any
                // prefix. Truncation is the point: these are the bits that hold it.
                let id = (bits >> 32) as u32;
                return (id & 0xfcff_ffff == 0x0000_5efe)
                    .then(|| judged("ISATAP interface id", Ipv4Addr::from(bits as u32)))
                    .flatten();
            };
            match rule {
                V6Rule::Block => Some((*name).to_string()),
                V6Rule::LowV4 => judged(name, Ipv4Addr::from(bits as u32)),
                V6Rule::SixToFour => judged(name, Ipv4Addr::from((bits >> 80) as u32)),
                V6Rule::Teredo => judged(name, Ipv4Addr::from(!(bits as u32)))
                    .or_else(|| judged(name, Ipv4Addr::from((bits >> 64) as u32))),
            }
        }
    }
}

/// A refused address: the refusal text starts with [`BLOCKED_PREFIX`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocked {
    /// The address that was judged.
    pub addr: IpAddr,
    /// The range it falls in (see [`blocked_range`]).
    pub range: String,
    /// The host name it came from, when the URL named a host rather than an address.
    pub host: Option<String>,
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{BLOCKED_PREFIX} {} ({})", self.addr, self.range)?;
        match &self.host {
            Some(host) if is_localhost(host) => write!(
                f,
                "\n{host} is a localhost name: loopback by definition, never looked up"
            ),
            Some(host) => write!(f, "\nthe host {host} resolves to {}", self.addr),
            None => Ok(()),
        }
    }
}

impl std::error::Error for Blocked {}

/// Why a URL was refused before anything was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The URL does not parse (`invalid URL: <reason>`).
    Invalid(String),
    /// The scheme is not http or https.
    Scheme(String),
    /// The host is a blocked address.
    Blocked(Blocked),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Invalid(reason) => write!(f, "invalid URL: {reason}"),
            Refusal::Scheme(scheme) => {
                write!(f, "only http and https URLs are allowed (got {scheme})")
            }
            Refusal::Blocked(blocked) => blocked.fmt(f),
        }
    }
}

/// Parses a URL with WHATWG rules and makes it fit to send: http or https only, a host,
/// no userinfo, no fragment, no trailing dots on the host name.
pub fn parse_url(input: &str) -> Result<Url, Refusal> {
    let url = Url::parse(input.trim()).map_err(|err| Refusal::Invalid(err.to_string()))?;
    normalize(url)
}

/// Resolves a redirect's `Location` against the URL that answered, then as [`parse_url`].
pub fn parse_location(base: &Url, location: &str) -> Result<Url, Refusal> {
    let url = base
        .join(location.trim())
        .map_err(|err| Refusal::Invalid(format!("redirect to {location:?}: {err}")))?;
    normalize(url)
}

fn normalize(mut url: Url) -> Result<Url, Refusal> {
    let scheme = url.scheme();
    if scheme != "http" && scheme != "https" {
        return Err(Refusal::Scheme(scheme.to_string()));
    }
    let domain = match url.host() {
        None => return Err(Refusal::Invalid("missing hostname".to_string())),
        Some(Host::Domain(domain)) => Some(domain.to_string()),
        Some(_) => None,
    };
    if let Some(domain) = domain {
        let trimmed = domain.trim_end_matches('.');
        if trimmed.is_empty() {
            return Err(Refusal::Invalid("missing hostname".to_string()));
        }
        if trimmed.len() != domain.len() {
            url.set_host(Some(trimmed))
                .map_err(|err| Refusal::Invalid(err.to_string()))?;
        }
    }
    // Credentials in a URL are not forwarded, like the Authorization header, and a
    // fragment is never part of a request.
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.set_fragment(None);
    Ok(url)
}

/// Whether a (lower-case, dot-trimmed) host name is a localhost name (RFC 6761).
fn is_localhost(host: &str) -> bool {
    let host = host.trim_end_matches('.');
    host.eq_ignore_ascii_case("localhost")
        || host.len() > ".localhost".len()
            && host[host.len() - ".localhost".len()..].eq_ignore_ascii_case(".localhost")
}

/// The loopback addresses a localhost name stands for.
const LOOPBACK: [IpAddr; 2] = [
    IpAddr::V4(Ipv4Addr::LOCALHOST),
    IpAddr::V6(Ipv6Addr::LOCALHOST),
];

/// What the host of a URL is, before any lookup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// An IP address literal, or a localhost name (its loopback addresses).
    Addresses(Vec<IpAddr>),
    /// A name that must be looked up (the resolver judges its addresses).
    Name(String),
}

/// Classifies a host as written in a URL or an HTTP authority (`127.0.0.1`, `[::1]`,
/// `example.com.`), with WHATWG host parsing.
pub fn target(host: &str) -> Result<Target, String> {
    let parsed = Host::parse(host).map_err(|err| err.to_string())?;
    Ok(target_of(&parsed))
}

fn target_of<S: AsRef<str>>(host: &Host<S>) -> Target {
    match host {
        Host::Ipv4(ip) => Target::Addresses(vec![IpAddr::V4(*ip)]),
        Host::Ipv6(ip) => Target::Addresses(vec![IpAddr::V6(*ip)]),
        Host::Domain(name) => {
            let name = name.as_ref().trim_end_matches('.').to_ascii_lowercase();
            if is_localhost(&name) {
                Target::Addresses(LOOPBACK.to_vec())
            } else {
                Target::Name(name)
            }
        }
    }
}

/// Judges a parsed URL before any request: a blocked IP literal or a localhost name is
/// refused unless the allowlist opens the host. Names that need a lookup pass here; the
/// resolver judges their addresses.
pub fn check_url(url: &Url, allow: &AllowList) -> Result<(), Blocked> {
    let Some(host) = url.host() else {
        return Ok(());
    };
    let port = url.port_or_known_default().unwrap_or(80);
    if allow.allows(&host.to_string(), port) {
        return Ok(());
    }
    let name = match &host {
        Host::Domain(name) => Some(name.to_string()),
        _ => None,
    };
    if let Target::Addresses(addrs) = target_of(&host) {
        judge(&addrs, name)?;
    }
    Ok(())
}

/// Refuses the first blocked address of a host.
fn judge(addrs: &[IpAddr], host: Option<String>) -> Result<(), Blocked> {
    for addr in addrs {
        if let Some(range) = blocked_range(*addr) {
            return Err(Blocked {
                addr: *addr,
                range,
                host,
            });
        }
    }
    Ok(())
}

/// Hosts the user opened with `webfetch.allow_hosts`: exact `host` (any port) or
/// `host:port` entries, compared after WHATWG host parsing (`LOCALHOST.` = `localhost`,
/// `[::1]` and `::1` are the same host).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList {
    entries: Vec<(String, Option<u16>)>,
}

impl AllowList {
    /// Parses the config entries; a malformed entry is an error that names it.
    pub fn parse(entries: &[String]) -> Result<AllowList, String> {
        let mut list = AllowList::default();
        for entry in entries {
            let parsed = parse_entry(entry.trim()).ok_or_else(|| {
                format!(
                    "webfetch.allow_hosts: {entry:?} is not a host or host:port \
                     (examples: \"docs.internal\", \"127.0.0.1:8080\", \"[::1]:8080\")"
                )
            })?;
            list.entries.push(parsed);
        }
        Ok(list)
    }

    /// Whether a host (as serialized by the `url` crate: `127.0.0.1`, `[::1]`,
    /// `example.com`) on a port is opened.
    pub fn allows(&self, host: &str, port: u16) -> bool {
        let host = canonical_host(host).unwrap_or_else(|| host.to_ascii_lowercase());
        self.entries
            .iter()
            .any(|(h, p)| *h == host && p.is_none_or(|p| p == port))
    }
}

/// A host in the one spelling allowlist entries and requests are compared in.
fn canonical_host(host: &str) -> Option<String> {
    let parsed = Host::parse(host).ok()?;
    Some(match parsed {
        Host::Domain(name) => name.trim_end_matches('.').to_string(),
        other => other.to_string(),
    })
}

fn parse_entry(entry: &str) -> Option<(String, Option<u16>)> {
    if entry.is_empty() {
        return None;
    }
    if entry.parse::<Ipv6Addr>().is_ok() {
        return Some((canonical_host(&format!("[{entry}]"))?, None));
    }
    let (host, port) = if let Some(rest) = entry.strip_prefix('[') {
        let end = rest.find(']')?;
        let host = &entry[..end + 2];
        match &rest[end + 1..] {
            "" => (host, None),
            tail => (host, Some(tail.strip_prefix(':')?)),
        }
    } else {
        match entry.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (entry, None),
        }
    };
    let port = match port {
        Some(port) => Some(port.parse::<u16>().ok()?),
        None => None,
    };
    let host = canonical_host(host)?;
    (!host.is_empty()).then_some((host, port))
}

/// A name-resolution failure, kept apart so the tool can say which host failed.
#[derive(Debug)]
pub struct LookupFailed {
    /// The host that was looked up.
    pub host: String,
    /// What the resolver said.
    pub reason: String,
}

impl fmt::Display for LookupFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DNS lookup failed for {}: {}", self.host, self.reason)
    }
}

impl std::error::Error for LookupFailed {}

/// The resolver of webfetch's HTTP agent: IP literals and localhost names need no lookup,
/// other names are looked up once; the host is refused if any address is blocked (unless
/// the allowlist opens it).
#[derive(Debug)]
pub struct GuardResolver {
    allow: Arc<AllowList>,
}

impl GuardResolver {
    /// A resolver that lets the allowlisted hosts through.
    pub fn new(allow: Arc<AllowList>) -> Self {
        GuardResolver { allow }
    }
}

/// The host and port a request URI is sent to.
fn host_port(uri: &Uri) -> Result<(String, u16), ureq::Error> {
    let host = uri
        .host()
        .ok_or_else(|| ureq::Error::BadUri(format!("{uri}: no host")))?;
    let port = uri
        .port_u16()
        .or_else(|| match uri.scheme_str() {
            Some("https") => Some(443),
            Some("http") => Some(80),
            _ => None,
        })
        .ok_or_else(|| ureq::Error::BadUri(format!("{uri}: not http or https")))?;
    Ok((host.to_string(), port))
}

impl Resolver for GuardResolver {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let (host, port) = host_port(uri)?;
        let allowed = self.allow.allows(&host, port);
        let target = target(&host).map_err(|err| ureq::Error::BadUri(format!("{host}: {err}")))?;
        let mut out = self.empty();
        let (addrs, name): (Vec<SocketAddr>, Option<String>) = match target {
            Target::Addresses(ips) => {
                let name = (!host.starts_with('[') && host.parse::<IpAddr>().is_err())
                    .then(|| host.clone());
                (
                    ips.into_iter()
                        .map(|ip| SocketAddr::new(ip, port))
                        .collect(),
                    name,
                )
            }
            Target::Name(name) => {
                let found = DefaultResolver::default()
                    .resolve(uri, config, timeout)
                    .map_err(|err| match err {
                        ureq::Error::Timeout(_) => err,
                        ureq::Error::HostNotFound => ureq::Error::Other(Box::new(LookupFailed {
                            host: name.clone(),
                            reason: "no addresses found".to_string(),
                        })),
                        other => ureq::Error::Other(Box::new(LookupFailed {
                            host: name.clone(),
                            reason: match other {
                                ureq::Error::Io(io) => io.to_string(),
                                other => other.to_string(),
                            },
                        })),
                    })?;
                (found.iter().copied().collect(), Some(name))
            }
        };
        if !allowed {
            let ips: Vec<IpAddr> = addrs.iter().map(SocketAddr::ip).collect();
            judge(&ips, name).map_err(|b| ureq::Error::Other(Box::new(b)))?;
        }
        for addr in addrs {
            if out.try_push(addr).is_err() {
                break;
            }
        }
        if out.is_empty() {
            return Err(ureq::Error::HostNotFound);
        }
        Ok(out)
    }
}

/// The first connector of webfetch's chain: re-checks every address the TCP connector may
/// dial (the ones the resolver returned, no second lookup) and refuses blocked ones unless
/// the allowlist opens the host. It opens nothing itself.
#[derive(Debug)]
pub struct GuardConnector {
    allow: Arc<AllowList>,
}

impl GuardConnector {
    /// A connector that lets the allowlisted hosts through.
    pub fn new(allow: Arc<AllowList>) -> Self {
        GuardConnector { allow }
    }
}

impl Connector<()> for GuardConnector {
    type Out = ();

    fn connect(
        &self,
        details: &ConnectionDetails,
        chained: Option<()>,
    ) -> Result<Option<()>, ureq::Error> {
        let (host, port) = host_port(details.uri)?;
        if !self.allow.allows(&host, port) {
            let ips: Vec<IpAddr> = details.addrs.iter().map(SocketAddr::ip).collect();
            let name = (!host.starts_with('[') && host.parse::<IpAddr>().is_err()).then_some(host);
            judge(&ips, name).map_err(|b| ureq::Error::Other(Box::new(b)))?;
        }
        Ok(chained)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What happens to a URL before any lookup: `Ok(None)` when it passes and the
    /// resolver will judge a name, `Ok(Some(addr))` when it passes as an address literal,
    /// `Err(text)` when refused.
    fn verdict(input: &str) -> Result<Option<String>, String> {
        let url = parse_url(input).map_err(|r| r.to_string())?;
        check_url(&url, &AllowList::default()).map_err(|b| b.to_string())?;
        Ok(
            match target(&url.host().map(|h| h.to_string()).unwrap_or_default()) {
                Ok(Target::Addresses(a)) => Some(a[0].to_string()),
                _ => None,
            },
        )
    }

    /// URLs that must be refused as blocked, with the address and range named.
    #[rustfmt::skip]
    const BLOCKED: &[(&str, &str, &str)] = &[
        ("http://127.0.0.1/admin", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://127.0.0.2/", "127.0.0.2", "127.0.0.0/8 loopback"),
        ("http://0x7f.1/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://0x7f000001/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://2130706433/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://017700000001/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://0177.0.0.1/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://0177.0.0.01/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://127.1/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://127.0.1/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://127.0.0.1./", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("HTTP://127.0.0.1/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://%31%32%37.0.0.1/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://１２７.０.０.１/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http:127.0.0.1/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http:/127.0.0.1/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http:\\\\127.0.0.1\\", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("  http://127.0.0.1/  ", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://127.0.0.1:8080/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("https://127.0.0.1/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://evil@127.0.0.1/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://user:pass@127.0.0.1/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://example.com@127.0.0.1/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://example.com:80@127.0.0.1/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://127.0.0.1#@example.com/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://127.0.0.1?@example.com/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://127.0.0.1\\@example.com/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://127.0.0.1/@example.com", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://a@b@127.0.0.1/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://localhost/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://LOCALHOST./", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://localhost../", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://api.localhost/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://a.b.LocalHost:9000/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://10.0.0.1/secret", "10.0.0.1", "10.0.0.0/8 private"),
        ("http://012.0.0.1/", "10.0.0.1", "10.0.0.0/8 private"),
        ("http://172.16.0.1/internal", "172.16.0.1", "172.16.0.0/12 private"),
        ("http://172.31.255.255/", "172.31.255.255", "172.16.0.0/12 private"),
        ("http://192.168.1.1/admin", "192.168.1.1", "192.168.0.0/16 private"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254", "169.254.0.0/16 link-local, cloud metadata"),
        ("http://0xa9fea9fe/", "169.254.169.254", "169.254.0.0/16 link-local, cloud metadata"),
        ("http://2852039166/", "169.254.169.254", "169.254.0.0/16 link-local, cloud metadata"),
        ("http://0251.0376.0251.0376/", "169.254.169.254", "169.254.0.0/16 link-local, cloud metadata"),
        ("http://0.0.0.0/", "0.0.0.0", "0.0.0.0/8 this network"),
        ("http://0/", "0.0.0.0", "0.0.0.0/8 this network"),
        ("http://100.64.0.1/", "100.64.0.1", "100.64.0.0/10 shared address space"),
        ("http://100.127.255.254/", "100.127.255.254", "100.64.0.0/10 shared address space"),
        ("http://198.18.0.1/", "198.18.0.1", "198.18.0.0/15 benchmarking"),
        ("http://198.19.255.1/", "198.19.255.1", "198.18.0.0/15 benchmarking"),
        ("http://224.0.0.1/", "224.0.0.1", "224.0.0.0/4 multicast"),
        ("http://239.255.255.250/", "239.255.255.250", "224.0.0.0/4 multicast"),
        ("http://240.0.0.1/", "240.0.0.1", "240.0.0.0/4 reserved"),
        ("http://255.255.255.255/", "255.255.255.255", "255.255.255.255/32 broadcast"),
        ("http://[::1]/", "::1", "::1/128 loopback"),
        ("http://[0:0:0:0:0:0:0:1]/", "::1", "::1/128 loopback"),
        ("http://[::]/", "::", "::/128 unspecified"),
        ("http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1", "::ffff:0:0/96 IPv4-mapped, embedding 127.0.0.1 in 127.0.0.0/8 loopback"),
        ("http://[::ffff:7f00:1]/", "::ffff:127.0.0.1", "::ffff:0:0/96 IPv4-mapped, embedding 127.0.0.1 in 127.0.0.0/8 loopback"),
        ("http://[0:0:0:0:0:ffff:a9fe:a9fe]/", "::ffff:169.254.169.254", "::ffff:0:0/96 IPv4-mapped, embedding 169.254.169.254 in 169.254.0.0/16 link-local, cloud metadata"),
        ("http://[::ffff:10.0.0.1]:8080/", "::ffff:10.0.0.1", "::ffff:0:0/96 IPv4-mapped, embedding 10.0.0.1 in 10.0.0.0/8 private"),
        ("http://[::ffff:0:7f00:1]/", "::ffff:0:7f00:1", "::ffff:0:0:0/96 IPv4-translated, embedding 127.0.0.1 in 127.0.0.0/8 loopback"),
        ("http://[::127.0.0.1]/", "::7f00:1", "::/96 IPv4-compatible, embedding 127.0.0.1 in 127.0.0.0/8 loopback"),
        ("http://[::a9fe:a9fe]/", "::a9fe:a9fe", "::/96 IPv4-compatible, embedding 169.254.169.254 in 169.254.0.0/16 link-local, cloud metadata"),
        ("http://[64:ff9b::7f00:1]/", "64:ff9b::7f00:1", "64:ff9b::/96 NAT64, embedding 127.0.0.1 in 127.0.0.0/8 loopback"),
        ("http://[64:ff9b::169.254.169.254]/", "64:ff9b::a9fe:a9fe", "64:ff9b::/96 NAT64, embedding 169.254.169.254 in 169.254.0.0/16 link-local, cloud metadata"),
        ("http://[64:ff9b:1::1]/", "64:ff9b:1::1", "64:ff9b:1::/48 local-use NAT64"),
        ("http://[2002:7f00:1::]/", "2002:7f00:1::", "2002::/16 6to4, embedding 127.0.0.1 in 127.0.0.0/8 loopback"),
        ("http://[2002:a9fe:a9fe::1]/", "2002:a9fe:a9fe::1", "2002::/16 6to4, embedding 169.254.169.254 in 169.254.0.0/16 link-local, cloud metadata"),
        ("http://[2002:c0a8:101::]/", "2002:c0a8:101::", "2002::/16 6to4, embedding 192.168.1.1 in 192.168.0.0/16 private"),
        ("http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "2001:0:4136:e378:8000:63bf:80ff:fffe", "2001::/32 Teredo, embedding 127.0.0.1 in 127.0.0.0/8 loopback"),
        ("http://[2001:0:a9fe:a9fe::f7f7:f7f7]/", "2001:0:a9fe:a9fe::f7f7:f7f7", "2001::/32 Teredo, embedding 169.254.169.254 in 169.254.0.0/16 link-local, cloud metadata"),
        ("http://[2600::5efe:7f00:1]/", "2600::5efe:7f00:1", "ISATAP interface id, embedding 127.0.0.1 in 127.0.0.0/8 loopback"),
        ("http://[2600::200:5efe:a00:1]/", "2600::200:5efe:a00:1", "ISATAP interface id, embedding 10.0.0.1 in 10.0.0.0/8 private"),
        ("http://[::7f00:1]/", "::7f00:1", "::/96 IPv4-compatible, embedding 127.0.0.1 in 127.0.0.0/8 loopback"),
        ("http://[fd00::1]/", "fd00::1", "fc00::/7 unique local"),
        ("http://[fc00::1]/", "fc00::1", "fc00::/7 unique local"),
        ("http://[fe80::1]/", "fe80::1", "fe80::/10 link-local"),
        ("http://[febf::1]/", "febf::1", "fe80::/10 link-local"),
        ("http://[fec0::1]/", "fec0::1", "fec0::/10 site-local"),
        ("http://[ff02::1]/", "ff02::1", "ff00::/8 multicast"),
        ("http://[FF05::1:3]/", "ff05::1:3", "ff00::/8 multicast"),
        ("http://127。0。0。1/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://①②⑦.0.0.1/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://12\t7.0.0\n.1/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://127.000.000.001/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://127.127.127.127/", "127.127.127.127", "127.0.0.0/8 loopback"),
        ("http://0x7F.0X0.0x00.0x1/", "127.0.0.1", "127.0.0.0/8 loopback"),
        ("http://[::ffff:0.0.0.0]/", "::ffff:0.0.0.0", "::ffff:0:0/96 IPv4-mapped, embedding 0.0.0.0 in 0.0.0.0/8 this network"),
    ];

    #[test]
    fn every_internal_spelling_is_refused_with_its_address_and_range() {
        for (url, addr, range) in BLOCKED {
            let err = verdict(url).expect_err(url);
            let first = err.lines().next().unwrap_or_default();
            assert_eq!(
                first,
                format!("{BLOCKED_PREFIX} {addr} ({range})"),
                "for {url}"
            );
        }
    }

    /// Public addresses, including the public IPv4 inside an embedding form, pass.
    #[rustfmt::skip]
    const PUBLIC: &[(&str, &str)] = &[
        ("http://8.8.8.8/", "8.8.8.8"),
        ("http://1.1.1.1/", "1.1.1.1"),
        ("https://93.184.216.34/", "93.184.216.34"),
        ("http://134744072/", "8.8.8.8"),
        ("http://0x8.0x8.0x8.0x8/", "8.8.8.8"),
        ("http://100.63.255.255/", "100.63.255.255"),
        ("http://100.128.0.0/", "100.128.0.0"),
        ("http://172.15.255.255/", "172.15.255.255"),
        ("http://172.32.0.1/", "172.32.0.1"),
        ("http://198.17.255.255/", "198.17.255.255"),
        ("http://198.20.0.1/", "198.20.0.1"),
        ("http://223.255.255.255/", "223.255.255.255"),
        ("http://169.253.0.1/", "169.253.0.1"),
        ("http://11.0.0.1/", "11.0.0.1"),
        ("http://126.255.255.255/", "126.255.255.255"),
        ("http://128.0.0.1/", "128.0.0.1"),
        ("http://[2606:4700:4700::1111]/", "2606:4700:4700::1111"),
        ("http://[2001:4860:4860::8888]/", "2001:4860:4860::8888"),
        ("http://[::ffff:8.8.8.8]/", "::ffff:8.8.8.8"),
        ("http://[64:ff9b::808:808]/", "64:ff9b::808:808"),
        ("http://[2002:808:808::1]/", "2002:808:808::1"),
        // Teredo with a public server and a public client; ISATAP with a public IPv4.
        ("http://[2001:0:808:808:0:0:f7f7:f7f7]/", "2001:0:808:808::f7f7:f7f7"),
        ("http://[2600::5efe:808:808]/", "2600::5efe:808:808"),
        ("http://[2606:4700::6810:84e5]/", "2606:4700::6810:84e5"),
        ("http://[fe7f::1]/", "fe7f::1"),
        ("http://[fbff::1]/", "fbff::1"),
    ];

    #[test]
    fn public_ip_literals_are_not_refused() {
        for (url, addr) in PUBLIC {
            assert_eq!(verdict(url), Ok(Some(addr.to_string())), "for {url}");
        }
    }

    #[test]
    fn names_pass_to_the_resolver_without_their_userinfo_or_fragment() {
        for (input, sent) in [
            ("https://example.com", "https://example.com/"),
            ("http://127.0.0.1@example.com/", "http://example.com/"),
            ("http://127.0.0.1:80@example.com/x", "http://example.com/x"),
            ("http://example.com./a#frag", "http://example.com/a"),
            ("http://EXAMPLE.com/", "http://example.com/"),
            (
                "http://localhost.example.com/",
                "http://localhost.example.com/",
            ),
            ("http://notlocalhost/", "http://notlocalhost/"),
        ] {
            assert_eq!(verdict(input), Ok(None), "for {input}");
            assert_eq!(
                parse_url(input).map(|u| u.to_string()),
                Ok(sent.to_string())
            );
        }
    }

    #[test]
    fn schemes_other_than_http_and_https_are_refused() {
        for (url, scheme) in [
            ("file:///etc/passwd", "file"),
            ("gopher://example.com/1", "gopher"),
            ("ftp://example.com/", "ftp"),
            ("FTP://127.0.0.1/", "ftp"),
            ("javascript:alert(1)", "javascript"),
            ("data:text/html,hi", "data"),
            ("ws://example.com/", "ws"),
            ("dict://127.0.0.1:11211/", "dict"),
        ] {
            assert_eq!(
                verdict(url),
                Err(format!(
                    "only http and https URLs are allowed (got {scheme})"
                )),
                "for {url}"
            );
        }
    }

    #[test]
    fn malformed_urls_are_invalid() {
        for (url, reason) in [
            ("", "relative URL without a base"),
            ("://bad-url", "relative URL without a base"),
            ("http://", "empty host"),
            ("http://[::1", "invalid IPv6 address"),
            ("http://[fe80::1%25eth0]/", "invalid IPv6 address"),
            ("http://256.0.0.1/", "invalid IPv4 address"),
            ("http://1.2.3.4.5/", "invalid IPv4 address"),
            ("http://0x100000000/", "invalid IPv4 address"),
            ("http://exa mple.com/", "invalid international domain name"),
            ("http://example.com:99999/", "invalid port number"),
            ("http://./", "missing hostname"),
        ] {
            assert_eq!(
                verdict(url),
                Err(format!("invalid URL: {reason}")),
                "for {url}"
            );
        }
    }

    #[test]
    fn redirect_locations_resolve_against_the_current_url() {
        let base = Url::parse("http://example.com/a/b").unwrap();
        let next = parse_location(&base, "../c").unwrap();
        assert_eq!(next.as_str(), "http://example.com/c");
        let next = parse_location(&base, "//127.0.0.1/x").unwrap();
        assert!(check_url(&next, &AllowList::default()).is_err());
        assert_eq!(
            parse_location(&base, "file:///etc/passwd")
                .unwrap_err()
                .to_string(),
            "only http and https URLs are allowed (got file)"
        );
        assert!(
            parse_location(&base, "http://[::1")
                .unwrap_err()
                .to_string()
                .starts_with("invalid URL: redirect to \"http://[::1\"")
        );
    }

    #[test]
    fn localhost_names_say_why() {
        let err = verdict("http://app.localhost/").unwrap_err();
        assert!(
            err.ends_with(
                "app.localhost is a localhost name: loopback by definition, never looked up"
            ),
            "{err}"
        );
    }

    #[test]
    fn allowlist_entries_open_exact_hosts_and_ports() {
        let allow = AllowList::parse(&[
            "127.0.0.1:8080".to_string(),
            "LOCALHOST.".to_string(),
            "[::1]:9000".to_string(),
            "fd00::5".to_string(),
            "intranet.example".to_string(),
            " 0x7f.2 ".to_string(),
        ])
        .unwrap();
        assert!(allow.allows("127.0.0.1", 8080));
        assert!(!allow.allows("127.0.0.1", 8081));
        assert!(!allow.allows("127.0.0.1", 80));
        assert!(allow.allows("localhost", 1234));
        assert!(allow.allows("[::1]", 9000));
        assert!(!allow.allows("[::1]", 9001));
        assert!(allow.allows("[fd00::5]", 443));
        assert!(allow.allows("intranet.example", 80));
        assert!(allow.allows("INTRANET.example.", 80));
        assert!(!allow.allows("x.intranet.example", 80));
        assert!(allow.allows("127.0.0.2", 1));
        let url = parse_url("http://2130706433:8080/").unwrap();
        assert_eq!(check_url(&url, &allow), Ok(()));
        let url = parse_url("http://127.0.0.1:8081/").unwrap();
        assert!(check_url(&url, &allow).is_err());
        let url = parse_url("http://sub.localhost/").unwrap();
        assert!(
            check_url(&url, &allow).is_err(),
            "a subdomain is another host"
        );
    }

    #[test]
    fn malformed_allowlist_entries_are_named() {
        for entry in ["", "host:port", "[::1", "[::1]x", "a b", "h:70000", ":80"] {
            let err = AllowList::parse(&[entry.to_string()]).unwrap_err();
            assert!(err.contains(&format!("{entry:?}")), "{err}");
        }
    }

    #[test]
    fn hosts_classify_with_whatwg_rules() {
        assert_eq!(
            target("0x7f.1"),
            Ok(Target::Addresses(vec!["127.0.0.1".parse().unwrap()]))
        );
        assert_eq!(
            target("[::1]"),
            Ok(Target::Addresses(vec!["::1".parse().unwrap()]))
        );
        assert_eq!(
            target("Example.COM."),
            Ok(Target::Name("example.com".into()))
        );
        assert_eq!(
            target("foo.localhost"),
            Ok(Target::Addresses(LOOPBACK.to_vec()))
        );
    }
}

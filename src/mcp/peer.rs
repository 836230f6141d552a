//! Which user is at the other end of a loopback TCP connection.
//!
//! Every local user can connect to a server on 127.0.0.1, and the server runs tools with
//! its own user's rights: without a token, a loopback server answers only connections
//! of its own user. The kernel lists every TCP socket of the machine's network namespace
//! in `/proc/net/tcp` and `/proc/net/tcp6` with its owner's uid; the client's socket is
//! the one whose local address is the connection's remote address and whose remote
//! address is the server's.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The uid owning the client socket of the connection from `peer` to `server`, when the
/// kernel's tables show it.
pub fn uid_of(peer: SocketAddr, server: SocketAddr) -> Option<u32> {
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .find_map(|table| {
            let text = std::fs::read_to_string(table).ok()?;
            find(&text, peer, server)
        })
}

/// The uid of the line of a `/proc/net/tcp{,6}` table whose local address is `peer` and
/// remote address `server`.
fn find(table: &str, peer: SocketAddr, server: SocketAddr) -> Option<u32> {
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (local, remote, uid) = (fields.get(1)?, fields.get(2)?, fields.get(7)?);
        (same(parse(local)?, peer) && same(parse(remote)?, server))
            .then(|| uid.parse().ok())
            .flatten()
    })
}

/// Whether two addresses are one, an IPv4 address and its IPv6-mapped form alike.
fn same(a: SocketAddr, b: SocketAddr) -> bool {
    let plain = |ip: IpAddr| match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    a.port() == b.port() && plain(a.ip()) == plain(b.ip())
}

/// An address as the tables write it: `0100007F:1F90` (the address's 32-bit words in
/// the machine's byte order, then the port), or 32 hex digits for IPv6.
fn parse(field: &str) -> Option<SocketAddr> {
    let (address, port) = field.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let words: Option<Vec<u32>> = (0..address.len() / 8)
        .map(|i| u32::from_str_radix(address.get(i * 8..i * 8 + 8)?, 16).ok())
        .collect();
    let bytes: Vec<u8> = words?.into_iter().flat_map(u32::to_ne_bytes).collect();
    let ip = match bytes.len() {
        4 => IpAddr::V4(Ipv4Addr::new(bytes[0], bytes[1], bytes[2], bytes[3])),
        16 => IpAddr::V6(Ipv6Addr::from(<[u8; 16]>::try_from(bytes).ok()?)),
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_endian = "little")]
    fn the_client_line_names_its_owner() {
        // Little-endian machines write 127.0.0.1 as 0100007F.
        let client: SocketAddr = "127.0.0.1:40000".parse().unwrap();
        let server: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
            0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 11 1\n\
            1: 0100007F:9C40 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 12 1\n\
            2: 0100007F:1F90 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 13 1\n";
        assert_eq!(find(table, client, server), Some(1000));
        assert_eq!(find(table, server, client), Some(0));
        let other: SocketAddr = "127.0.0.1:40001".parse().unwrap();
        assert_eq!(find(table, other, server), None);
    }

    #[test]
    fn a_real_connection_is_found_with_this_users_uid() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let server = listener.local_addr().unwrap();
        let client = std::net::TcpStream::connect(server).unwrap();
        let (_accepted, peer) = listener.accept().unwrap();
        assert_eq!(peer, client.local_addr().unwrap());
        // SAFETY: geteuid cannot fail.
        let me = unsafe { libc::geteuid() };
        assert_eq!(uid_of(peer, server), Some(me));
    }
}

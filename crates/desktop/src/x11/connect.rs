//! Reaching a display: by name with the usual Xauthority lookup, or a local display number with a
//! cookie we hold (our own Xvfb, whose cookie is in no Xauthority file the library would search).

use std::path::Path;

use x11rb::rust_connection::{DefaultStream, RustConnection};

use crate::error::{DesktopError, Result};

/// Connect to a display by name (`:1`), with the usual `XAUTHORITY` lookup, or with an explicit
/// Xauthority file. Tests use this to watch a desktop from the outside.
pub fn connect(display: &str, xauthority: Option<&Path>) -> Result<(RustConnection, usize)> {
    let Some(path) = xauthority else {
        return RustConnection::connect(Some(display)).map_err(|e| {
            DesktopError::Connection(format!("cannot connect to display {display:?}: {e}"))
        });
    };
    let bytes = std::fs::read(path)
        .map_err(|e| DesktopError::Io(format!("cannot read {}: {e}", path.display())))?;
    let cookie = parse_cookie(&bytes).ok_or_else(|| {
        DesktopError::Io(format!("{} holds no MIT-MAGIC-COOKIE-1", path.display()))
    })?;
    let number: u32 = display
        .trim_start_matches(':')
        .split('.')
        .next()
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| {
            DesktopError::invalid(
                "display",
                format!("{display:?} is not a local display like \":1\""),
            )
        })?;
    Ok((connect_local(number, &cookie)?, 0))
}

/// The cookie of the first MIT-MAGIC-COOKIE-1 entry of an Xauthority file.
fn parse_cookie(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut rest = bytes;
    let field = |rest: &mut &[u8]| -> Option<Vec<u8>> {
        let len = usize::from(u16::from_be_bytes([*rest.first()?, *rest.get(1)?]));
        let value = rest.get(2..2 + len)?.to_vec();
        *rest = &rest[2 + len..];
        Some(value)
    };
    while rest.len() >= 2 {
        rest = &rest[2..]; // family
        let _address = field(&mut rest)?;
        let _number = field(&mut rest)?;
        let name = field(&mut rest)?;
        let data = field(&mut rest)?;
        if name == crate::server::AUTH_NAME {
            return Some(data);
        }
    }
    None
}

/// Connect to local display `number` with a cookie: the abstract socket, else the socket file, in
/// the order libxcb tries them. The abstract socket is this network namespace's own, so it is the
/// server this namespace started; the file in the shared /tmp can be another namespace's (a sandbox
/// with a display of the same number), whose cookie is not ours.
pub(crate) fn connect_local(number: u32, cookie: &[u8]) -> Result<RustConnection> {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixStream};
    let path = format!("/tmp/.X11-unix/X{number}");
    let stream = SocketAddr::from_abstract_name(path.as_bytes())
        .and_then(|addr| UnixStream::connect_addr(&addr))
        .or_else(|_| UnixStream::connect(&path));
    let stream = stream.map_err(|e| {
        DesktopError::Connection(format!("cannot connect to display :{number}: {e}"))
    })?;
    let (stream, _) = DefaultStream::from_unix_stream(stream)
        .map_err(|e| DesktopError::Connection(format!("display :{number}: {e}")))?;
    RustConnection::connect_to_stream_with_auth_info(
        stream,
        0,
        crate::server::AUTH_NAME.to_vec(),
        cookie.to_vec(),
    )
    .map_err(|e| DesktopError::Connection(format!("display :{number} refused us: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_are_read_from_xauthority_files() {
        let mut file = crate::server::xauthority_entry(Some(3), &[1, 2, 3, 4]);
        assert_eq!(parse_cookie(&file), Some(vec![1, 2, 3, 4]));
        file.truncate(file.len() - 1);
        assert_eq!(parse_cookie(&file), None);
    }
}

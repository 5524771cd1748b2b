//! The RemoteDesktop portal (`org.freedesktop.portal.RemoteDesktop`, xdg-desktop-portal) over the
//! session bus: the way a program that is not the compositor gets an EIS socket on GNOME (45+) and
//! KDE (Plasma 6).
//!
//! `CreateSession`, `SelectDevices` (keyboard and pointer; persist mode 2, "until revoked", with a
//! restore token from an earlier session when there is one), `Start` (where the compositor asks
//! the user, unless the token stands for an earlier yes), then `ConnectToEIS` (version 2 of the
//! interface). The first three answer through a Request object: the reply to the call is its path,
//! the result comes later as its `Response` signal. We subscribe to that signal before calling, on
//! the path the portal will use (`/org/freedesktop/portal/desktop/request/SENDER/TOKEN`), so an
//! answer cannot come before we listen.
//!
//! The session lives as long as the D-Bus connection that made it: keep the [`RemoteDesktop`].
//!
//! Not tested here: Debian 12 has no portal with `ConnectToEIS`. This compiles and follows the
//! portal's documentation; nothing more is claimed.

use std::collections::HashMap;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use zbus::proxy::CacheProperties;
use zbus::zvariant::{ObjectPath, OwnedObjectPath, OwnedValue, Value};

use crate::error::{DesktopError, Result};

const BUS_NAME: &str = "org.freedesktop.portal.Desktop";
const PATH: &str = "/org/freedesktop/portal/desktop";
const REMOTE_DESKTOP: &str = "org.freedesktop.portal.RemoteDesktop";
/// `SelectDevices` types: keyboard and pointer.
const KEYBOARD: u32 = 1;
const POINTER: u32 = 2;
/// Persist the permission until the user revokes it (a restore token comes back from `Start`).
const PERSIST_UNTIL_REVOKED: u32 = 2;
/// The first version with `ConnectToEIS`.
const CONNECT_TO_EIS_VERSION: u32 = 2;

/// A started RemoteDesktop session (see the module documentation).
pub struct RemoteDesktop {
    conn: zbus::Connection,
    session: OwnedObjectPath,
    restore_token: Option<String>,
}

impl RemoteDesktop {
    /// Start a session for keyboard and pointer; `restore_token` (from [`Self::restore_token`] of
    /// an earlier session) lets it start without asking the user again. `limit` bounds the whole,
    /// the user's answer to the compositor's dialog included. Errors: no portal on the session
    /// bus, a portal without `ConnectToEIS`, the user saying no, a session without both devices.
    pub async fn start(restore_token: Option<&str>, limit: Duration) -> Result<RemoteDesktop> {
        tokio::time::timeout(limit, RemoteDesktop::start_unbounded(restore_token))
            .await
            .map_err(|_| DesktopError::Timeout {
                what: "starting a RemoteDesktop portal session (the user may not have answered the compositor's dialog)".into(),
                limit,
            })?
    }

    async fn start_unbounded(restore_token: Option<&str>) -> Result<RemoteDesktop> {
        let conn = zbus::Connection::session()
            .await
            .map_err(|e| DesktopError::Portal(format!("no session bus: {e}")))?;
        let portal = proxy(&conn, PATH, REMOTE_DESKTOP).await?;
        let version: u32 = portal.get_property("version").await.map_err(|e| {
            DesktopError::Portal(format!(
                "{REMOTE_DESKTOP} is not on the session bus ({e}); xdg-desktop-portal with a GNOME or KDE backend provides it"
            ))
        })?;
        if version < CONNECT_TO_EIS_VERSION {
            return Err(DesktopError::Portal(format!(
                "{REMOTE_DESKTOP} is version {version}, without ConnectToEIS (version {CONNECT_TO_EIS_VERSION}: xdg-desktop-portal 1.18 with GNOME 45 or KDE Plasma 6)"
            )));
        }

        let token = handle_token();
        let mut options = HashMap::from([
            ("handle_token", Value::from(token.as_str())),
            ("session_handle_token", Value::from(token.as_str())),
        ]);
        let results = request(&conn, &portal, "CreateSession", &(&options,), &token).await?;
        // A string by the specification; some portals send an object path.
        let session: OwnedObjectPath = match results.get("session_handle").map(|v| &**v) {
            Some(Value::Str(path)) => ObjectPath::try_from(path.as_str()).ok().map(Into::into),
            Some(Value::ObjectPath(path)) => Some(path.clone().into()),
            _ => None,
        }
        .ok_or_else(|| {
            DesktopError::Portal("CreateSession answered without a session_handle".into())
        })?;

        let token = handle_token();
        options = HashMap::from([
            ("handle_token", Value::from(token.as_str())),
            ("types", Value::from(KEYBOARD | POINTER)),
            ("persist_mode", Value::from(PERSIST_UNTIL_REVOKED)),
        ]);
        if let Some(restore) = restore_token {
            options.insert("restore_token", Value::from(restore));
        }
        request(
            &conn,
            &portal,
            "SelectDevices",
            &(&session, &options),
            &token,
        )
        .await?;

        let token = handle_token();
        options = HashMap::from([("handle_token", Value::from(token.as_str()))]);
        let results = request(&conn, &portal, "Start", &(&session, "", &options), &token).await?;
        let devices = results
            .get("devices")
            .and_then(|v| v.downcast_ref::<u32>().ok())
            .unwrap_or(0);
        if devices & (KEYBOARD | POINTER) != KEYBOARD | POINTER {
            return Err(DesktopError::Portal(format!(
                "the session was started with devices {devices:#b}; input needs keyboard and pointer (0b11)"
            )));
        }
        let restore_token = results
            .get("restore_token")
            .and_then(|v| v.downcast_ref::<&str>().ok())
            .map(str::to_owned);
        Ok(RemoteDesktop {
            conn,
            session,
            restore_token,
        })
    }

    /// The token that starts the next session without asking the user, when the portal gave one.
    pub fn restore_token(&self) -> Option<&str> {
        self.restore_token.as_deref()
    }

    /// The compositor's EIS socket for this session, for [`super::Input::connect`].
    pub async fn connect_to_eis(&self) -> Result<UnixStream> {
        let portal = proxy(&self.conn, PATH, REMOTE_DESKTOP).await?;
        let options: HashMap<&str, Value> = HashMap::new();
        let fd: zbus::zvariant::OwnedFd = portal
            .call("ConnectToEIS", &(&self.session, options))
            .await
            .map_err(|e| DesktopError::Portal(format!("ConnectToEIS failed: {e}")))?;
        Ok(UnixStream::from(std::os::fd::OwnedFd::from(fd)))
    }

    /// End the session (dropping the connection ends it too).
    pub async fn close(self) -> Result<()> {
        let session = proxy(
            &self.conn,
            self.session.as_str(),
            "org.freedesktop.portal.Session",
        )
        .await?;
        session
            .call_method("Close", &())
            .await
            .map_err(|e| DesktopError::Portal(format!("closing the session failed: {e}")))?;
        Ok(())
    }
}

/// A proxy for the portal's object at `path`, reading no properties ahead.
async fn proxy<'a>(
    conn: &zbus::Connection,
    path: &'a str,
    interface: &'a str,
) -> Result<zbus::Proxy<'a>> {
    let built = zbus::proxy::Builder::new(conn)
        .destination(BUS_NAME)
        .and_then(|b| b.path(path))
        .and_then(|b| b.interface(interface))
        .map(|b| b.cache_properties(CacheProperties::No));
    match built {
        Ok(builder) => builder.build().await,
        Err(e) => Err(e),
    }
    .map_err(|e| DesktopError::Portal(format!("{interface} at {path}: {e}")))
}

/// Call `method`, whose options carry `handle_token: token`, and wait for its Request's Response:
/// the results on success (0); the user's refusal (1) or another end (2) as errors.
async fn request<B>(
    conn: &zbus::Connection,
    portal: &zbus::Proxy<'_>,
    method: &str,
    body: &B,
    token: &str,
) -> Result<HashMap<String, OwnedValue>>
where
    B: serde::Serialize + zbus::zvariant::DynamicType,
{
    let sender = conn
        .unique_name()
        .ok_or_else(|| DesktopError::Portal("the session bus gave us no name".into()))?
        .trim_start_matches(':')
        .replace('.', "_");
    let path = format!("{PATH}/request/{sender}/{token}");
    let request = proxy(conn, &path, "org.freedesktop.portal.Request").await?;
    let mut responses = request
        .receive_signal("Response")
        .await
        .map_err(|e| DesktopError::Portal(format!("listening for {method}'s answer: {e}")))?;
    portal
        .call_method(method, body)
        .await
        .map_err(|e| DesktopError::Portal(format!("{method} failed: {e}")))?;
    let answer = responses.next().await.ok_or_else(|| {
        DesktopError::Portal(format!("the portal went away before answering {method}"))
    })?;
    let (code, results): (u32, HashMap<String, OwnedValue>) = answer
        .body()
        .deserialize()
        .map_err(|e| DesktopError::Portal(format!("{method}'s answer cannot be read: {e}")))?;
    match code {
        0 => Ok(results),
        1 => Err(DesktopError::Portal(format!(
            "the user refused the remote-desktop request ({method})"
        ))),
        other => Err(DesktopError::Portal(format!(
            "{method} ended without success (response {other})"
        ))),
    }
}

/// A token for one request, unique in this process (letters, digits and underscores only).
fn handle_token() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "screenpilot_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

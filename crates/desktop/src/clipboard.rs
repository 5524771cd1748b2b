//! The desktop's clipboard: read and set CLIPBOARD and PRIMARY, as text or PNG.
//!
//! Reading runs on the desktop's connection (`x11::clipboard`: ConvertSelection, then the owner's
//! events). Setting hands the contents to the desktop's selection owner (`x11::clipboard_owner`), a
//! thread with its own connection started on the first set, which keeps answering pastes after the
//! call returns, until another program copies or the desktop closes (closing its connection gives
//! the selection back to the server, so an attached display keeps nothing of ours).

use crate::desktop::Desktop;
use crate::error::{DesktopError, Result};
use std::sync::Arc;

use crate::on_wayland::WaylandParts;
use crate::wayland::ClipboardServer;
use crate::x11::clipboard_owner::Owner;
use crate::x11::{ClipContent, ClipKind, Selection};

impl Desktop {
    /// Read `which` as `kind`. Errors: nobody owns it ([`DesktopError::SelectionEmpty`], field
    /// `selection`); its owner does not offer `kind` ([`DesktopError::TypeNotOffered`], field `type`,
    /// with the types it does offer); more than [`crate::x11::MAX_CLIP_BYTES`]; an owner that does
    /// not answer within [`crate::x11::clipboard::ANSWER_TIMEOUT`].
    pub async fn clipboard_get(&self, which: Selection, kind: ClipKind) -> Result<ClipContent> {
        self.run(
            &format!("reading {}", which.human()),
            self.step_timeout,
            move |x| x.clipboard_get(which, kind),
        )
        .await
    }

    /// The types `which` offers (`UTF8_STRING`, `image/png`, ..., as its owner names them); empty
    /// when nobody owns it.
    pub async fn clipboard_types(&self, which: Selection) -> Result<Vec<String>> {
        let types = self
            .run(
                &format!("reading the types of {}", which.human()),
                self.step_timeout,
                move |x| x.clipboard_types(which),
            )
            .await?;
        Ok(types.unwrap_or_default())
    }

    /// Make this desktop the owner of `which`, holding `content`; returns once the server made us
    /// its owner, so a paste that follows gets it. Refused (field `content`): more than
    /// [`crate::x11::MAX_CLIP_BYTES`], or PNG bytes that are not a PNG file.
    pub async fn clipboard_set(&self, which: Selection, content: ClipContent) -> Result<()> {
        content.check("content")?;
        if self.is_closed() {
            return Err(DesktopError::Closed);
        }
        let limit = self.step_timeout;
        if let Some(wayland) = self.wayland() {
            return set_on_wayland(wayland, which, content, limit).await;
        }
        let mut owner = match tokio::time::timeout(limit, self.clipboard_owner().lock()).await {
            Ok(guard) => guard,
            Err(_) => {
                return Err(DesktopError::Busy {
                    what: format!("setting {}", which.human()),
                    waited: limit,
                })
            }
        };
        if !owner.as_ref().is_some_and(Owner::alive) {
            let (display, xauthority) = (self.display.clone(), self.xauthority().cloned());
            let started =
                crate::desktop::blocking("starting the clipboard owner", limit, move || {
                    let (conn, screen) = crate::x11::connect(&display, xauthority.as_deref())?;
                    Owner::start(conn, screen)
                })
                .await?;
            *owner = Some(started);
        }
        let Some(running) = owner.as_ref() else {
            return Err(DesktopError::Closed);
        };
        let answer = running.own(which, content)?;
        match tokio::time::timeout(limit, answer).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(DesktopError::Connection(
                "the clipboard owner ended before it took the selection".into(),
            )),
            Err(_) => Err(DesktopError::Timeout {
                what: format!("setting {}", which.human()),
                limit,
            }),
        }
    }
}

/// Set `which` through the desktop's data-control source (started on the first set; it keeps
/// answering pastes until another program copies or the desktop closes).
async fn set_on_wayland(
    wayland: &WaylandParts,
    which: Selection,
    content: ClipContent,
    limit: std::time::Duration,
) -> Result<()> {
    let mut server = match tokio::time::timeout(limit, wayland.clipboard.lock()).await {
        Ok(guard) => guard,
        Err(_) => {
            return Err(DesktopError::Busy {
                what: format!("setting {}", which.human()),
                waited: limit,
            })
        }
    };
    if !server.as_ref().is_some_and(|s| s.alive()) {
        let socket = wayland.socket.clone();
        let started = crate::desktop::blocking("starting the clipboard source", limit, move || {
            ClipboardServer::start(&socket)
        })
        .await?;
        *server = Some(Arc::new(started));
    }
    let Some(running) = server.clone() else {
        return Err(DesktopError::Closed);
    };
    crate::desktop::blocking(&format!("setting {}", which.human()), limit, move || {
        running.set(which, content, limit)
    })
    .await
}

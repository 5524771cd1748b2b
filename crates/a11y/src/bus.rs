//! The accessibility bus of one desktop: found through its session bus (`org.a11y.Bus`, which D-Bus
//! activates `at-spi-bus-launcher` for), every call bounded (a hung application never answers, and
//! D-Bus sets no limit of its own), and a count of the tree's events for waits to wake on.
//!
//! GTK sends events only for kinds someone registered with the registry, so we register the ones
//! waits need: states, children, names and values, windows, focus. New and closed applications are
//! the registry's own children-changed events.

use atspi::proxy::bus::{BusProxy, StatusProxy};
use atspi::proxy::registry::RegistryProxy;
use futures_util::StreamExt;
use tokio::sync::watch;
use zbus::proxy::CacheProperties;

use crate::error::{from_zbus, A11yError, Result, CALL_LIMIT};

/// The events waits wake on: (match rule, registry event name).
const EVENTS: &[(&str, &str)] = &[
    (
        "type='signal',interface='org.a11y.atspi.Event.Object',member='StateChanged'",
        "object:state-changed",
    ),
    (
        "type='signal',interface='org.a11y.atspi.Event.Object',member='ChildrenChanged'",
        "object:children-changed",
    ),
    (
        "type='signal',interface='org.a11y.atspi.Event.Object',member='PropertyChange'",
        "object:property-change",
    ),
    (
        "type='signal',interface='org.a11y.atspi.Event.Object',member='TextChanged'",
        "object:text-changed",
    ),
    (
        "type='signal',interface='org.a11y.atspi.Event.Window'",
        "window:",
    ),
    (
        "type='signal',interface='org.a11y.atspi.Event.Focus'",
        "focus:",
    ),
];

/// A connection to a desktop's accessibility bus.
pub struct Bus {
    pub(crate) conn: zbus::Connection,
    /// Every application gives boxes relative to its window (on Wayland, where a client cannot
    /// know where its window is): set by [`Bus::boxes_relative_to_windows`].
    relative_boxes: std::sync::atomic::AtomicBool,
    events: watch::Receiver<u64>,
    pump: tokio::task::JoinHandle<()>,
}

impl Drop for Bus {
    fn drop(&mut self) {
        self.pump.abort();
    }
}

impl Bus {
    /// Connect through the session bus at `session_address`: ask it for the accessibility bus
    /// (starting AT-SPI on first use), say that accessibility is on (Qt and Chromium look), and
    /// start counting events.
    pub async fn connect(session_address: &str) -> Result<Bus> {
        let no_bus = |why: String| A11yError::NoBus(why);
        let session = zbus::connection::Builder::address(session_address)
            .map_err(|e| {
                no_bus(format!(
                    "the session bus address {session_address:?} does not read: {e}"
                ))
            })?
            .method_timeout(CALL_LIMIT)
            .build()
            .await
            .map_err(|e| {
                no_bus(format!(
                    "cannot reach the session bus {session_address}: {e}"
                ))
            })?;
        // Accessibility on (Qt and Chromium look), before the bus starts: turning it on later
        // makes the launcher start the registry again under a running session.
        if let Ok(status) = StatusProxy::builder(&session)
            .cache_properties(CacheProperties::No)
            .build()
            .await
        {
            let _ = status.set_is_enabled(true).await;
        }
        let launcher = BusProxy::new(&session)
            .await
            .map_err(|e| no_bus(format!("the session bus has no accessibility service: {e}")))?;
        let address = launcher.get_address().await.map_err(|e| {
            no_bus(format!(
                "the session bus does not start AT-SPI (org.a11y.Bus: {e}); install at-spi2-core"
            ))
        })?;
        let conn = zbus::connection::Builder::address(address.as_str())
            .map_err(|e| no_bus(format!("the accessibility bus address {address:?}: {e}")))?
            .method_timeout(CALL_LIMIT)
            .build()
            .await
            .map_err(|e| no_bus(format!("cannot reach the accessibility bus {address}: {e}")))?;
        let (count, events) = watch::channel(0u64);
        // Read events from before the first registration on, so none is missed (and a stream
        // nobody reads never holds up the connection's replies).
        let pump = tokio::spawn(count_events(zbus::MessageStream::from(&conn), count));
        let dbus = zbus::fdo::DBusProxy::new(&conn)
            .await
            .map_err(|e| from_zbus(e, "the accessibility bus"))?;
        let registry = RegistryProxy::new(&conn)
            .await
            .map_err(|e| from_zbus(e, "the accessibility registry"))?;
        for (rule, event) in EVENTS {
            let rule = zbus::MatchRule::try_from(*rule)
                .map_err(|e| A11yError::Bus(format!("match rule {rule}: {e}")))?;
            dbus.add_match_rule(rule)
                .await
                .map_err(|e| from_zbus(e.into(), "subscribing to accessibility events"))?;
            register(&registry, event).await?;
        }
        Ok(Bus {
            conn,
            relative_boxes: Default::default(),
            events,
            pump,
        })
    }

    /// Say that every application on this bus gives its boxes relative to its window (a Wayland
    /// desktop): they are placed where the window list shows each window, as GTK 4's always are.
    pub fn boxes_relative_to_windows(&self, relative: bool) {
        self.relative_boxes
            .store(relative, std::sync::atomic::Ordering::Relaxed);
    }

    pub(crate) fn relative_boxes(&self) -> bool {
        self.relative_boxes
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The processes with a connection on the accessibility bus: programs that speak
    /// accessibility, whether or not their windows are in the tree yet (one just started registers
    /// them a moment after its window shows).
    pub async fn connected_pids(&self) -> Result<std::collections::HashSet<u32>> {
        let dbus = zbus::fdo::DBusProxy::new(&self.conn)
            .await
            .map_err(|e| from_zbus(e, "the accessibility bus"))?;
        let names = dbus
            .list_names()
            .await
            .map_err(|e| from_zbus(e.into(), "the accessibility bus's names"))?;
        let mut pids = std::collections::HashSet::new();
        for name in names.iter().filter(|n| n.as_str().starts_with(':')) {
            if let Ok(pid) = dbus
                .get_connection_unix_process_id(name.inner().clone())
                .await
            {
                pids.insert(pid);
            }
        }
        Ok(pids)
    }

    /// A counter that grows with every event of the tree (a state, children, a name, a window,
    /// the focus, an application coming or going).
    pub fn events(&self) -> watch::Receiver<u64> {
        self.events.clone()
    }
}

async fn count_events(mut stream: zbus::MessageStream, count: watch::Sender<u64>) {
    while let Some(Ok(message)) = stream.next().await {
        if message.message_type() != zbus::message::Type::Signal {
            continue;
        }
        let is_event = message
            .header()
            .interface()
            .is_some_and(|i| i.as_str().starts_with("org.a11y.atspi.Event"));
        if is_event {
            count.send_modify(|n| *n += 1);
        }
    }
}

/// Register one kind of event. The registry is started on first use, and when an application and
/// we both use it first, a second one may start and quit at once, taking our call with it
/// ("disconnected without replying"): the call is made again, to the one that stays.
async fn register(registry: &RegistryProxy<'_>, event: &str) -> Result<()> {
    let mut tries = 0;
    loop {
        tries += 1;
        match registry.register_event(event).await {
            Ok(()) => return Ok(()),
            Err(zbus::Error::MethodError(name, _, _))
                if tries < 4 && name.as_str() == "org.freedesktop.DBus.Error.NoReply" => {}
            Err(e) => return Err(from_zbus(e, "registering accessibility events")),
        }
    }
}

//! What the EIS server says, taken into the [`Link`]'s state: seats and what they offer (the first
//! one announced in full is bound), devices with their interfaces, regions and keymap, resumed or
//! paused, the keyboard's modifiers, pings, the answer to our sync, and a `disconnected` with its
//! reason. Events meant for receivers, or for capabilities we do not bind, are ignored.

use reis::ei;

use super::{Cap, Device, Link, Region, Seat};
use crate::error::{DesktopError, Result};

impl Link {
    pub(super) fn handle(&mut self, event: ei::Event) -> Result<()> {
        match event {
            ei::Event::Connection(_, event) => self.on_connection(event)?,
            ei::Event::Callback(callback, ei::callback::Event::Done { .. })
                if self.sync.as_ref() == Some(&callback) =>
            {
                self.synced = true;
            }
            ei::Event::Seat(seat, event) => self.on_seat(seat, event),
            ei::Event::Device(device, event) => self.on_device(device, event),
            ei::Event::Keyboard(keyboard, event) => self.on_keyboard(keyboard, event),
            ei::Event::PointerAbsolute(
                object,
                ei::pointer_absolute::Event::Destroyed { serial },
            ) => {
                self.last_serial = serial;
                self.devices
                    .iter_mut()
                    .filter(|d| d.pointer_absolute.as_ref() == Some(&object))
                    .for_each(|d| d.pointer_absolute = None);
            }
            ei::Event::Button(object, ei::button::Event::Destroyed { serial }) => {
                self.last_serial = serial;
                self.devices
                    .iter_mut()
                    .filter(|d| d.button.as_ref() == Some(&object))
                    .for_each(|d| d.button = None);
            }
            ei::Event::Scroll(object, ei::scroll::Event::Destroyed { serial }) => {
                self.last_serial = serial;
                self.devices
                    .iter_mut()
                    .filter(|d| d.scroll.as_ref() == Some(&object))
                    .for_each(|d| d.scroll = None);
            }
            // The rest is for receivers (input coming from the server) or for capabilities we
            // do not bind.
            _ => {}
        }
        Ok(())
    }

    fn on_connection(&mut self, event: ei::connection::Event) -> Result<()> {
        match event {
            ei::connection::Event::Seat { seat } => self.seats.push(Seat {
                proxy: seat,
                name: String::new(),
                offers: Vec::new(),
            }),
            ei::connection::Event::Ping { ping } => ping.done(0),
            ei::connection::Event::Disconnected {
                reason,
                explanation,
                ..
            } => {
                let why = match explanation {
                    Some(text) if !text.is_empty() => format!(": {text}"),
                    _ => String::new(),
                };
                return Err(DesktopError::Connection(format!(
                    "the EIS server disconnected us ({reason:?}){why}"
                )));
            }
            // An object of ours the server had destroyed already: nothing to do.
            _ => {}
        }
        Ok(())
    }

    fn on_seat(&mut self, proxy: ei::Seat, event: ei::seat::Event) {
        let Some(seat) = self.seats.iter_mut().find(|s| s.proxy == proxy) else {
            return;
        };
        match event {
            ei::seat::Event::Name { name } => seat.name = name,
            ei::seat::Event::Capability { mask, interface } => seat.offers.push((interface, mask)),
            // The first seat announced in full is ours.
            ei::seat::Event::Done if self.bound.is_none() => {
                let wanted = Cap::ALL.map(Cap::interface);
                let mask = seat
                    .offers
                    .iter()
                    .filter(|(name, _)| wanted.contains(&name.as_str()))
                    .fold(0, |mask, (_, bit)| mask | bit);
                seat.proxy.bind(mask);
                self.bound = Some(seat.proxy.clone());
            }
            ei::seat::Event::Device { device } => self.devices.push(Device {
                proxy: device,
                name: String::new(),
                pointer_absolute: None,
                button: None,
                scroll: None,
                keyboard: None,
                regions: Vec::new(),
                keymap: None,
                done: false,
                resumed: false,
                emulating: false,
            }),
            ei::seat::Event::Destroyed { serial } => {
                self.last_serial = serial;
                self.seats.retain(|s| s.proxy != proxy);
                if self.bound.as_ref() == Some(&proxy) {
                    self.bound = None;
                }
            }
            _ => {}
        }
    }

    fn on_device(&mut self, proxy: ei::Device, event: ei::device::Event) {
        let Some(device) = self.devices.iter_mut().find(|d| d.proxy == proxy) else {
            return;
        };
        match event {
            ei::device::Event::Name { name } => device.name = name,
            ei::device::Event::Interface { object } => match object.interface() {
                "ei_pointer_absolute" => device.pointer_absolute = object.downcast(),
                "ei_button" => device.button = object.downcast(),
                "ei_scroll" => device.scroll = object.downcast(),
                "ei_keyboard" => device.keyboard = object.downcast(),
                _ => {}
            },
            ei::device::Event::Region {
                offset_x,
                offset_y,
                width,
                hight,
                scale,
            } => device.regions.push(Region {
                x: offset_x,
                y: offset_y,
                width,
                height: hight,
                scale,
            }),
            ei::device::Event::Done => {
                device.done = true;
                // Version 3 waits for the client to say the device is configured.
                if proxy.version() >= 3 {
                    proxy.ready();
                }
            }
            ei::device::Event::Resumed { serial } => {
                self.last_serial = serial;
                device.resumed = true;
            }
            ei::device::Event::Paused { serial } => {
                self.last_serial = serial;
                device.resumed = false;
                device.emulating = false;
            }
            ei::device::Event::Destroyed { serial } => {
                self.last_serial = serial;
                self.devices.retain(|d| d.proxy != proxy);
            }
            _ => {}
        }
    }

    fn on_keyboard(&mut self, keyboard: ei::Keyboard, event: ei::keyboard::Event) {
        let device = self
            .devices
            .iter_mut()
            .find(|d| d.keyboard.as_ref() == Some(&keyboard));
        match event {
            ei::keyboard::Event::Keymap {
                keymap_type: ei::keyboard::KeymapType::Xkb,
                size,
                keymap,
            } => {
                if let Some(device) = device {
                    device.keymap = Some((keymap, size));
                }
            }
            ei::keyboard::Event::Modifiers {
                serial,
                locked,
                group,
                ..
            } => {
                self.last_serial = serial;
                self.locked = locked;
                self.group = group;
            }
            ei::keyboard::Event::Destroyed { serial } => {
                self.last_serial = serial;
                if let Some(device) = device {
                    device.keyboard = None;
                }
            }
            _ => {}
        }
    }
}

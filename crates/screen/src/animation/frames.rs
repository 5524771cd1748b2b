//! Which screens of a recording become frames, and when each is shown.

use crate::cast::EventKind;
use crate::emulator::Screen;
use crate::geometry::Size;
use crate::grid::CellGrid;

/// How long a synchronized update (mode 2026) left open holds the screen, in the recording's time:
/// alacritty gives up on one after 150 ms of real time, which a renderer going faster than real time
/// would never reach.
const SYNC_GIVE_UP_SECS: f64 = 0.15;

/// One frame: the screen as it stood at `at` seconds of playback, shown until the next frame.
#[derive(Debug, Clone)]
pub struct Frame {
    pub at: f64,
    pub grid: CellGrid,
}

/// Feeds a recording's events into a [`Screen`] and says which screens to draw: a frame only when
/// what a person would see changed ([`Screen::visual_hash`]), and at most `fps` a second. A change
/// made less than a frame after the previous one is shown a frame after it, together with whatever
/// else changed by then, so a burst of output costs one frame and nothing shown is ever late by more
/// than a frame.
pub struct FrameSampler {
    screen: Screen,
    /// The shortest time between two frames, 1 / fps.
    gap: f64,
    /// The visual hash of the last frame given out (none before the first).
    shown: Option<u64>,
    /// When the screen first differed from the last frame given out, if it does now.
    changed_at: Option<f64>,
    /// The earliest time the next frame may be shown.
    next_allowed: f64,
    /// When the synchronized update the screen holds began.
    sync_since: Option<f64>,
    generation: u64,
}

impl FrameSampler {
    /// A blank screen of `size`, sampled at most `fps` frames a second (`fps` is positive: the caller
    /// checks it). The blank screen is the first frame, at 0, unless output comes at 0 too.
    pub fn new(size: Size, fps: f64) -> FrameSampler {
        let mut screen = Screen::new(size, 0);
        // Pictures the program drew are drawn as a terminal with graphics shows them (a recording
        // holds them only when the program sent them: a session that did not opt in got its text).
        screen.set_images(true);
        let generation = screen.generation();
        FrameSampler {
            screen,
            gap: 1.0 / fps,
            shown: None,
            changed_at: Some(0.0),
            next_allowed: 0.0,
            sync_since: None,
            generation,
        }
    }

    /// Take the next event, at `at` seconds of playback (never before the previous event's time).
    /// Returns the frame that is due before it, if one is.
    pub fn push(&mut self, at: f64, event: &EventKind) -> Option<Frame> {
        if let Some(since) = self.sync_since {
            if at >= since + SYNC_GIVE_UP_SECS {
                // Replies to the program are dropped: a recording cannot answer.
                let _ = self.screen.flush_sync();
                self.sync_since = None;
                self.note_change(since + SYNC_GIVE_UP_SECS);
            }
        }
        let frame = match self.due() {
            Some(due) if due < at => Some(self.take(due)),
            _ => None,
        };
        match event {
            EventKind::Output(text) => {
                let _ = self.screen.feed(text.as_bytes());
            }
            EventKind::Resize(size) => self.screen.resize(*size),
            EventKind::Other => {}
        }
        if self.screen.sync_deadline().is_some() {
            self.sync_since.get_or_insert(at);
        } else {
            self.sync_since = None;
        }
        self.note_change(at);
        frame
    }

    /// The last frame, if the screen changed after the one before it. Call once, after the last event.
    pub fn finish(&mut self) -> Option<Frame> {
        if let Some(since) = self.sync_since.take() {
            let _ = self.screen.flush_sync();
            self.note_change(since + SYNC_GIVE_UP_SECS);
        }
        self.due().map(|due| self.take(due))
    }

    /// The screen as fed so far.
    pub fn screen(&self) -> &Screen {
        &self.screen
    }

    fn due(&self) -> Option<f64> {
        self.changed_at.map(|at| at.max(self.next_allowed))
    }

    fn take(&mut self, due: f64) -> Frame {
        self.shown = Some(self.screen.visual_hash());
        self.changed_at = None;
        self.next_allowed = due + self.gap;
        Frame {
            at: due,
            grid: self.screen.cells(),
        }
    }

    /// After the screen may have changed at `at`: remember when it began to differ from the last
    /// frame, or forget it when it went back to looking the same.
    fn note_change(&mut self, at: f64) {
        let generation = self.screen.generation();
        if generation == self.generation {
            return;
        }
        self.generation = generation;
        if self.shown == Some(self.screen.visual_hash()) {
            self.changed_at = None;
        } else {
            self.changed_at.get_or_insert(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(text: &str) -> EventKind {
        EventKind::Output(text.to_owned())
    }

    /// Push (time, text) events and finish; the frames' times and first rows.
    fn sample(fps: f64, events: &[(f64, &str)]) -> Vec<(f64, String)> {
        let mut sampler = FrameSampler::new(Size::new(10, 2), fps);
        let mut frames: Vec<Frame> = events
            .iter()
            .filter_map(|(at, text)| sampler.push(*at, &output(text)))
            .collect();
        frames.extend(sampler.finish());
        frames
            .into_iter()
            .map(|f| {
                let row: String = f.grid.rows[0].iter().map(|c| c.text.as_str()).collect();
                (f.at, row.trim_end().to_owned())
            })
            .collect()
    }

    #[test]
    fn a_picture_the_program_drew_is_in_its_frame() {
        let mut sampler = FrameSampler::new(Size::new(10, 4), 10.0);
        // kitty graphics: transmit and show a 2x2 red RGB picture at the cursor.
        let red = output("\x1b_Ga=T,f=24,s=2,v=2;/wAA/wAA/wAA/wAA\x1b\\");
        let mut frames: Vec<Frame> = sampler.push(0.5, &red).into_iter().collect();
        frames.extend(sampler.finish());
        let last = frames.last().expect("a frame");
        assert_eq!(last.at, 0.5);
        assert_eq!(
            last.grid.images.len(),
            1,
            "the picture is drawn in the frame"
        );
        assert_eq!(last.grid.images[0].bitmap.rgba[..4], [255, 0, 0, 255]);
    }

    #[test]
    fn each_change_is_a_frame_at_its_time_and_the_blank_screen_opens() {
        let frames = sample(10.0, &[(0.5, "a"), (1.0, "b"), (3.0, "c")]);
        assert_eq!(
            frames,
            [
                (0.0, String::new()),
                (0.5, "a".into()),
                (1.0, "ab".into()),
                (3.0, "abc".into())
            ]
        );
    }

    #[test]
    fn output_at_the_start_replaces_the_blank_frame() {
        let frames = sample(10.0, &[(0.0, "a"), (0.0, "b"), (1.0, "c")]);
        assert_eq!(frames, [(0.0, "ab".into()), (1.0, "abc".into())]);
    }

    #[test]
    fn a_burst_within_a_frame_is_one_frame_a_frame_later() {
        // At 4 fps frames are 0.25 s apart: "b", "c" and "d" come within one frame of "a".
        let frames = sample(
            4.0,
            &[(0.0, "a"), (0.1, "b"), (0.2, "c"), (0.3, "d"), (2.0, "e")],
        );
        assert_eq!(
            frames,
            [
                (0.0, "a".into()),
                (0.25, "abc".into()),
                (0.5, "abcd".into()),
                (2.0, "abcde".into())
            ]
        );
    }

    #[test]
    fn output_that_changes_nothing_seen_makes_no_frame() {
        // The cursor moved away and back before a frame was due, then a colour change alone.
        let frames = sample(
            10.0,
            &[
                (0.0, "a"),
                (0.05, "\x1b[2;1H"),
                (0.08, "\x1b[1;2H"),
                (2.0, "\x1b[0m"),
            ],
        );
        assert_eq!(frames, [(0.0, "a".into())]);
    }

    #[test]
    fn a_synchronized_update_never_closed_shows_after_the_give_up_time() {
        let frames = sample(
            10.0,
            &[(0.0, "a"), (1.0, "\x1b[?2026hb"), (2.0, "\x1b[?25l")],
        );
        assert_eq!(frames[0], (0.0, "a".into()));
        assert_eq!(frames[1].1, "ab");
        assert!((frames[1].0 - 1.15).abs() < 1e-9, "{frames:?}");
    }

    #[test]
    fn a_resize_is_a_new_screen_size() {
        let mut sampler = FrameSampler::new(Size::new(10, 2), 10.0);
        assert!(sampler.push(0.0, &output("a")).is_none());
        let first = sampler.push(1.0, &EventKind::Resize(Size::new(20, 3)));
        assert_eq!(first.map(|f| f.grid.size), Some(Size::new(10, 2)));
        assert_eq!(
            sampler.finish().map(|f| (f.at, f.grid.size)),
            Some((1.0, Size::new(20, 3)))
        );
    }
}

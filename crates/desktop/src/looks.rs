//! Telling drawing that changes what a person sees from drawing that does not: a box drawn again as
//! it was, or toggling between the two looks it had last. A caret or a cursor blinking in a focused
//! field draws twice a second forever (GTK draws its whole entry each time), and must not keep a
//! desktop from reading as still. Each box is known by where it is and a hash of its pixels.

/// A box on the screen: x, y, width, height.
pub type Area = (i16, i16, u16, u16);

/// The smallest box holding both.
pub(crate) fn join(a: Area, b: Area) -> Area {
    let left = a.0.min(b.0);
    let top = a.1.min(b.1);
    let right = (i32::from(a.0) + i32::from(a.2)).max(i32::from(b.0) + i32::from(b.2));
    let bottom = (i32::from(a.1) + i32::from(a.3)).max(i32::from(b.1) + i32::from(b.3));
    let span = |from: i16, to: i32| u16::try_from(to - i32::from(from)).unwrap_or(u16::MAX);
    (left, top, span(left, right), span(top, bottom))
}

/// The last looks of the boxes drawn lately, and the damage generation they were read up to
/// ([`crate::Desktop::looks`] starts one at the generation now).
#[derive(Debug, Default)]
pub struct Looks {
    /// Per box, its last two looks (older first); the most recently drawn boxes last.
    boxes: Vec<(Area, [Option<u64>; 2])>,
    /// The damage generation read last.
    pub(crate) seen: u64,
}

impl Looks {
    /// Boxes up to this many pixels are compared: a blinking entry or caret, not a window repainted
    /// (larger drawing is always a change).
    pub const LARGEST: u32 = 256 * 256;
    /// How many boxes are remembered.
    const REMEMBERED: usize = 32;

    /// Looks of the drawing after damage generation `seen`.
    pub(crate) fn since(seen: u64) -> Looks {
        Looks {
            boxes: Vec::new(),
            seen,
        }
    }

    /// Note that `area` now looks like `look` (a hash of its pixels): true when that is a change (a
    /// look it had in neither of its last two drawings), false when it is the same again or back to
    /// the look before.
    pub fn changed(&mut self, area: Area, look: u64) -> bool {
        let found = self.boxes.iter().position(|(a, _)| *a == area);
        let mut last = found.map_or([None, None], |i| self.boxes.remove(i).1);
        let seen = last.contains(&Some(look));
        if last[1] != Some(look) {
            last = [last[1], Some(look)];
        }
        self.boxes.push((area, last));
        if self.boxes.len() > Self::REMEMBERED {
            self.boxes.remove(0);
        }
        !seen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_box_blinking_between_two_looks_stops_being_a_change_but_a_third_look_is_one() {
        let mut looks = Looks::default();
        let entry = (10, 10, 168, 34);
        // Caret off, then on: both new.
        assert!(looks.changed(entry, 1));
        assert!(looks.changed(entry, 2));
        // Blinking on: no change, however long.
        for _ in 0..10 {
            assert!(!looks.changed(entry, 1));
            assert!(!looks.changed(entry, 2));
        }
        // Drawn again as it is: no change.
        assert!(!looks.changed(entry, 2));
        // A key typed: a look it never had.
        assert!(looks.changed(entry, 3));
        // The same look in another box is that box's first.
        assert!(looks.changed((0, 0, 5, 5), 3));
    }

    #[test]
    fn joined_boxes_hold_both() {
        assert_eq!(join((10, 10, 5, 5), (0, 20, 2, 2)), (0, 10, 15, 12));
        assert_eq!(join((0, 0, 4, 4), (1, 1, 1, 1)), (0, 0, 4, 4));
    }

    #[test]
    fn only_the_most_recent_boxes_are_remembered() {
        let mut looks = Looks::default();
        for i in 0..100 {
            looks.changed((i, 0, 1, 1), 7);
        }
        assert_eq!(looks.boxes.len(), Looks::REMEMBERED);
        // The last one is remembered: drawn again as it is, no change.
        assert!(!looks.changed((99, 0, 1, 1), 7));
    }
}

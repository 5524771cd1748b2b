//! How many leading cells of an alacritty row were written since the row was last cleared.
//!
//! alacritty_terminal tracks this for every row (`Row::occ`: past it, every cell equals the blank the
//! row was cleared with) but keeps the field private. Its `Serialize` impl (the crate's default
//! `serde` feature) hands the field to the serializer by name, though: [`occupied`] asks for that one
//! field with a serializer that skips the cells, so the answer costs the same for any width. Copying a
//! row into the history then reads only the cells a program wrote, not the whole width (a `seq` line
//! writes a few cells of 80 or 200).
//!
//! Should a later alacritty rename the field or serialize rows differently, [`occupied`] answers
//! `None` and the caller reads the whole row, as before; a test pins the answer to what rows hold.

use std::fmt;

use alacritty_terminal::grid::Row;
use serde::ser::{self, Impossible, Serialize, SerializeStruct, Serializer};

/// The number of leading cells of `row` that may differ from the blank it was last cleared with;
/// `None` when alacritty did not say.
pub(crate) fn occupied<T: Serialize>(row: &Row<T>) -> Option<usize> {
    row.serialize(Probe).ok().flatten()
}

/// Serializes a row down to its `occ` field.
struct Probe;

/// Anything a row serializes as that is not the struct [`Probe`] expects.
#[derive(Debug)]
struct Unexpected;

impl fmt::Display for Unexpected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not an alacritty row")
    }
}

impl std::error::Error for Unexpected {}

impl ser::Error for Unexpected {
    fn custom<M: fmt::Display>(_: M) -> Self {
        Unexpected
    }
}

/// The fields of a row: only `occ` is read, the cells are skipped unread.
struct Fields(Option<usize>);

impl SerializeStruct for Fields {
    type Ok = Option<usize>;
    type Error = Unexpected;

    fn serialize_field<V: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &V,
    ) -> Result<(), Unexpected> {
        if key == "occ" {
            self.0 = value.serialize(Probe)?;
        }
        Ok(())
    }

    fn end(self) -> Result<Option<usize>, Unexpected> {
        Ok(self.0)
    }
}

/// Serializer methods for every shape a row (or its `occ`) is not.
macro_rules! unexpected {
    ($($method:ident($($arg:ty),*)),* $(,)?) => {
        $(fn $method(self, $(_: $arg),*) -> Result<Option<usize>, Unexpected> {
            Err(Unexpected)
        })*
    };
}

impl Serializer for Probe {
    type Ok = Option<usize>;
    type Error = Unexpected;
    type SerializeSeq = Impossible<Option<usize>, Unexpected>;
    type SerializeTuple = Impossible<Option<usize>, Unexpected>;
    type SerializeTupleStruct = Impossible<Option<usize>, Unexpected>;
    type SerializeTupleVariant = Impossible<Option<usize>, Unexpected>;
    type SerializeMap = Impossible<Option<usize>, Unexpected>;
    type SerializeStruct = Fields;
    type SerializeStructVariant = Impossible<Option<usize>, Unexpected>;

    /// `occ` is a `usize`, which serde writes as a `u64`.
    fn serialize_u64(self, v: u64) -> Result<Option<usize>, Unexpected> {
        usize::try_from(v).map(Some).map_err(|_| Unexpected)
    }

    fn serialize_struct(self, name: &'static str, _: usize) -> Result<Fields, Unexpected> {
        match name {
            "Row" => Ok(Fields(None)),
            _ => Err(Unexpected),
        }
    }

    unexpected! {
        serialize_bool(bool), serialize_i8(i8), serialize_i16(i16), serialize_i32(i32),
        serialize_i64(i64), serialize_u8(u8), serialize_u16(u16), serialize_u32(u32),
        serialize_f32(f32), serialize_f64(f64), serialize_char(char), serialize_str(&str),
        serialize_bytes(&[u8]), serialize_none(), serialize_unit(),
        serialize_unit_struct(&'static str),
        serialize_unit_variant(&'static str, u32, &'static str),
    }

    fn serialize_some<V: ?Sized + Serialize>(self, _: &V) -> Result<Option<usize>, Unexpected> {
        Err(Unexpected)
    }

    fn serialize_newtype_struct<V: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: &V,
    ) -> Result<Option<usize>, Unexpected> {
        Err(Unexpected)
    }

    fn serialize_newtype_variant<V: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &V,
    ) -> Result<Option<usize>, Unexpected> {
        Err(Unexpected)
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Unexpected> {
        Err(Unexpected)
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Unexpected> {
        Err(Unexpected)
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Unexpected> {
        Err(Unexpected)
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Unexpected> {
        Err(Unexpected)
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Unexpected> {
        Err(Unexpected)
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Unexpected> {
        Err(Unexpected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alacritty_terminal::index::Column;
    use alacritty_terminal::term::cell::Cell;

    #[test]
    fn a_row_reports_how_far_it_was_written_whatever_its_width() {
        for width in [2, 80, 500] {
            let mut row: Row<Cell> = Row::new(width);
            assert_eq!(occupied(&row), Some(0), "a new row of {width}");
            row[Column(1)].c = 'x';
            assert_eq!(occupied(&row), Some(2), "one cell written in {width}");
            row.reset(&Cell::default());
            assert_eq!(occupied(&row), Some(0), "cleared, {width}");
        }
    }

    #[test]
    fn cells_past_the_occupied_ones_are_blank_in_a_real_terminal() {
        use alacritty_terminal::event::VoidListener;
        use alacritty_terminal::grid::Dimensions;
        use alacritty_terminal::index::Line;
        use alacritty_terminal::term::{Config, Term};
        use alacritty_terminal::vte::ansi::{Processor, StdSyncHandler};

        struct Dims;
        impl Dimensions for Dims {
            fn total_lines(&self) -> usize {
                4
            }
            fn screen_lines(&self) -> usize {
                4
            }
            fn columns(&self) -> usize {
                30
            }
        }
        let mut term = Term::new(Config::default(), &Dims, VoidListener);
        let mut parser: Processor<StdSyncHandler> = Processor::new();
        parser.advance(
            &mut term,
            b"short\r\n\x1b[44mblue erase\x1b[K\x1b[0m\r\n\x1b[10Cfar\r\n\r\nlast",
        );
        let grid = term.grid();
        let occ: Vec<usize> = (0..4)
            .map(|line| occupied(&grid[Line(line)]).expect("alacritty reports occ"))
            .collect();
        for (line, &occ) in occ.iter().enumerate() {
            let row = &grid[Line(line as i32)];
            let first_after = row[..].get(occ).cloned();
            assert!(
                row[..]
                    .iter()
                    .skip(occ)
                    .all(|cell| Some(cell) == first_after.as_ref()),
                "line {line}: cells past {occ} differ"
            );
        }
        // "short" scrolled off; an erase with a colour writes every cell.
        assert_eq!(occ, [30, 13, 0, 4], "blue erase, far, nothing, last");
    }
}

//! Compact cells: every cell's look in a fraction of the bytes of one object per cell. Each row is a
//! list of runs of one style, `[col, text, style]`; `style` indexes a table of the screen's distinct
//! styles, each with named colours and attributes (no bit masks).

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::grid::{CellGrid, CellWidth, Cursor};
use crate::style::{attribute_names, color_name, Style};

/// One style, named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NamedStyle {
    /// `default`, `red`, `bright_red`, `color(242)` or `#rrggbb`.
    pub fg: String,
    pub bg: String,
    /// Any of bold, dim, italic, underline (and double_, dotted_, dashed_underline, undercurl),
    /// strike, reverse, hidden.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attrs: Vec<String>,
}

impl NamedStyle {
    fn of(style: &Style) -> NamedStyle {
        NamedStyle {
            fg: color_name(style.fg),
            bg: color_name(style.bg),
            attrs: attribute_names(style.attrs)
                .into_iter()
                .map(str::to_owned)
                .collect(),
        }
    }
}

/// A run of cells of one style on one row: its first column, its text (wide characters once), and
/// its style's index in [`CellRuns::styles`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Run(pub u16, pub String, pub usize);

/// The whole screen as runs of one style per row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CellRuns {
    /// The distinct styles, in order of first use.
    pub styles: Vec<NamedStyle>,
    /// One list of runs per row, row 0 first; a row's runs cover all its columns.
    pub rows: Vec<Vec<Run>>,
    pub cursor: Cursor,
}

impl CellRuns {
    pub fn of(grid: &CellGrid) -> CellRuns {
        let mut styles: Vec<Style> = Vec::new();
        let mut index: HashMap<Style, usize> = HashMap::new();
        let mut style_index = |style: Style| {
            *index.entry(style).or_insert_with(|| {
                styles.push(style);
                styles.len() - 1
            })
        };
        let rows = grid
            .rows
            .iter()
            .map(|cells| {
                let mut runs: Vec<Run> = Vec::new();
                let mut current: Option<Style> = None;
                for (col, cell) in cells.iter().enumerate() {
                    let style = Style::of(cell);
                    // The second half of a wide character belongs to the first, whatever it says.
                    let joins = cell.width == CellWidth::Spacer || current == Some(style);
                    match runs.last_mut() {
                        Some(run) if joins => {
                            if cell.width != CellWidth::Spacer {
                                run.1.push_str(&cell.text);
                            }
                        }
                        _ => {
                            current = Some(style);
                            let text = if cell.width == CellWidth::Spacer {
                                String::new()
                            } else {
                                cell.text.clone()
                            };
                            runs.push(Run(col as u16, text, style_index(style)));
                        }
                    }
                }
                runs
            })
            .collect();
        CellRuns {
            styles: styles.iter().map(NamedStyle::of).collect(),
            rows,
            cursor: grid.cursor,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_screens::{self, grid};

    #[test]
    fn runs_cover_every_row_and_name_their_styles() {
        let grid = grid(40, 14, &test_screens::dialog_menu());
        let runs = CellRuns::of(&grid);
        for (cells, row) in grid.rows.iter().zip(&runs.rows) {
            let text: String = row.iter().map(|run| run.1.as_str()).collect();
            let expected: String = cells.iter().map(|c| c.text.as_str()).collect();
            assert_eq!(text, expected, "runs hold the row's text, padding included");
            assert_eq!(row[0].0, 0);
            assert!(row.windows(2).all(|w| w[0].0 < w[1].0));
        }
        let banana = runs.rows[5]
            .iter()
            .find(|run| run.1 == "Banana")
            .expect("Banana is a run of its own");
        assert_eq!(
            runs.styles[banana.2],
            NamedStyle {
                fg: "white".to_owned(),
                bg: "blue".to_owned(),
                attrs: vec!["bold".to_owned()],
            }
        );
        assert!(runs.styles.len() < 12, "each style once: {:?}", runs.styles);
    }

    #[test]
    fn a_wide_character_is_one_run_entry_over_two_columns() {
        let grid = grid(10, 1, "a日b".as_bytes());
        let runs = CellRuns::of(&grid);
        assert_eq!(runs.rows[0], vec![Run(0, "a日b      ".to_owned(), 0)]);
    }
}

//! A drawn screen (ratatui's `Buffer`) as a picture: SVG, or an HTML page holding it, readable
//! on GitHub and in any browser. The real cells in their colours and attributes, each character
//! placed on its cell (so box drawing and columns line up whatever monospace font is at hand),
//! no script, no external font. Every character is XML-escaped; the buffer's text was sanitised
//! when it was drawn.

use std::fmt::Write;

use ratatui::buffer::{Buffer, Cell};
use ratatui::style::{Color, Modifier};

use crate::text::escape_xml;
use crate::theme::Theme;

/// Cell size in pixels at a 14px font: the usual monospace advance (0.6em) and line height.
const CELL_W: f32 = 8.4;
const CELL_H: f32 = 18.0;
const FONT_SIZE: u32 = 14;
/// The baseline within a cell.
const BASELINE: f32 = 14.0;
const FONTS: &str = "ui-monospace, 'SFMono-Regular', 'DejaVu Sans Mono', Menlo, Consolas, 'Liberation Mono', monospace";

/// The 16 ANSI colours (VS Code's terminal palette): what a terminal shows for the themes' names.
const ANSI: [u32; 16] = [
    0x000000, 0xcd3131, 0x0dbc79, 0xe5e510, 0x2472c8, 0xbc3fbc, 0x11a8cd, 0xe5e5e5, 0x666666, 0xf14c4c, 0x23d18b,
    0xf5f543, 0x3b8eea, 0xd670d6, 0x29b8db, 0xffffff,
];

/// The terminal's own colours (`reset`), taken to suit the theme: a theme whose text is dark is
/// meant for a light terminal.
#[derive(Debug, Clone, Copy)]
struct Defaults {
    fg: u32,
    bg: u32,
}

impl Defaults {
    fn for_theme(theme: &Theme) -> Defaults {
        let dark = Defaults {
            fg: 0xd4d4d4,
            bg: 0x1e1e1e,
        };
        match rgb(theme.text, 0) {
            Some(text) if theme.text != Color::Reset && luminance(text) < 0.5 => Defaults {
                fg: 0x1e1e1e,
                bg: 0xffffff,
            },
            _ => dark,
        }
    }
}

fn luminance(rgb: u32) -> f32 {
    let [_, r, g, b] = rgb.to_be_bytes();
    (0.299 * f32::from(r) + 0.587 * f32::from(g) + 0.114 * f32::from(b)) / 255.0
}

/// A colour as 0xRRGGBB; `reset` is `default`, or None where `default` is None.
fn rgb(color: Color, default: u32) -> Option<u32> {
    Some(match color {
        Color::Reset => default,
        Color::Black => ANSI[0],
        Color::Red => ANSI[1],
        Color::Green => ANSI[2],
        Color::Yellow => ANSI[3],
        Color::Blue => ANSI[4],
        Color::Magenta => ANSI[5],
        Color::Cyan => ANSI[6],
        Color::Gray => ANSI[7],
        Color::DarkGray => ANSI[8],
        Color::LightRed => ANSI[9],
        Color::LightGreen => ANSI[10],
        Color::LightYellow => ANSI[11],
        Color::LightBlue => ANSI[12],
        Color::LightMagenta => ANSI[13],
        Color::LightCyan => ANSI[14],
        Color::White => ANSI[15],
        Color::Rgb(r, g, b) => u32::from_be_bytes([0, r, g, b]),
        Color::Indexed(i) => indexed(i),
    })
}

/// The xterm 256-colour palette: the 16, a 6x6x6 cube, then 24 greys.
fn indexed(i: u8) -> u32 {
    match i {
        0..=15 => ANSI[usize::from(i)],
        16..=231 => {
            let level = |n: u8| if n == 0 { 0 } else { 55 + 40 * u32::from(n) };
            let n = i - 16;
            level(n / 36) << 16 | level(n / 6 % 6) << 8 | level(n % 6)
        }
        _ => {
            let grey = 8 + 10 * u32::from(i - 232);
            grey << 16 | grey << 8 | grey
        }
    }
}

/// What a cell's text looks like: the runs of text break where it changes.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Look {
    fg: u32,
    bg: u32,
    bold: bool,
    italic: bool,
    dim: bool,
    underline: bool,
    strike: bool,
    hidden: bool,
}

impl Look {
    fn of(cell: &Cell, d: Defaults) -> Look {
        let m = cell.modifier;
        let (mut fg, mut bg) = (rgb(cell.fg, d.fg).unwrap_or(d.fg), rgb(cell.bg, d.bg).unwrap_or(d.bg));
        if m.contains(Modifier::REVERSED) {
            std::mem::swap(&mut fg, &mut bg);
        }
        Look {
            fg,
            bg,
            bold: m.contains(Modifier::BOLD),
            italic: m.contains(Modifier::ITALIC),
            dim: m.contains(Modifier::DIM),
            underline: m.contains(Modifier::UNDERLINED),
            strike: m.contains(Modifier::CROSSED_OUT),
            hidden: m.contains(Modifier::HIDDEN),
        }
    }

    fn attributes(&self) -> String {
        let mut out = format!(" fill=\"#{:06x}\"", self.fg);
        if self.bold {
            out.push_str(" font-weight=\"bold\"");
        }
        if self.italic {
            out.push_str(" font-style=\"italic\"");
        }
        if self.dim {
            out.push_str(" opacity=\"0.6\"");
        }
        match (self.underline, self.strike) {
            (true, true) => out.push_str(" text-decoration=\"underline line-through\""),
            (true, false) => out.push_str(" text-decoration=\"underline\""),
            (false, true) => out.push_str(" text-decoration=\"line-through\""),
            (false, false) => {}
        }
        out
    }
}

fn x_of(column: u16) -> f32 {
    f32::from(column) * CELL_W
}

/// The screen as an SVG document.
pub fn svg(buffer: &Buffer, theme: &Theme) -> String {
    let d = Defaults::for_theme(theme);
    let area = buffer.area;
    let (width, height) = (x_of(area.width), f32::from(area.height) * CELL_H);
    let mut out = String::new();
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.1}\" height=\"{height:.1}\" \
         viewBox=\"0 0 {width:.1} {height:.1}\" font-family=\"{FONTS}\" font-size=\"{FONT_SIZE}\" \
         xml:space=\"preserve\">\n<rect width=\"100%\" height=\"100%\" fill=\"#{:06x}\"/>\n",
        d.bg
    );
    for row in 0..area.height {
        let cells: Vec<(u16, &Cell)> = (0..area.width)
            .filter_map(|col| buffer.cell((area.x + col, area.y + row)).map(|c| (col, c)))
            .collect();
        backgrounds(&cells, row, d, &mut out);
        texts(&cells, row, d, &mut out);
    }
    out.push_str("</svg>\n");
    out
}

/// The screen as an HTML page around its SVG.
pub fn html(buffer: &Buffer, theme: &Theme) -> String {
    let d = Defaults::for_theme(theme);
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>a2a-watch</title></head>\n\
         <body style=\"margin:0;background:#{:06x}\">\n{}</body></html>\n",
        d.bg,
        svg(buffer, theme)
    )
}

/// One rectangle per run of cells whose background is not the terminal's.
fn backgrounds(cells: &[(u16, &Cell)], row: u16, d: Defaults, out: &mut String) {
    let mut i = 0;
    while i < cells.len() {
        let bg = Look::of(cells[i].1, d).bg;
        let run = cells[i..].iter().take_while(|(_, c)| Look::of(c, d).bg == bg).count();
        if bg != d.bg {
            let _ = writeln!(
                out,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{CELL_H:.1}\" fill=\"#{bg:06x}\"/>",
                x_of(cells[i].0),
                f32::from(row) * CELL_H,
                f32::from(u16::try_from(run).unwrap_or(u16::MAX)) * CELL_W
            );
        }
        i += run;
    }
}

/// One `<text>` per word of cells that look the same, each character placed on its cell.
fn texts(cells: &[(u16, &Cell)], row: u16, d: Defaults, out: &mut String) {
    let y = f32::from(row) * CELL_H + BASELINE;
    let mut word: Vec<(u16, &str)> = Vec::new();
    let mut look: Option<Look> = None;
    for &(col, cell) in cells {
        let symbol = cell.symbol();
        let here = Look::of(cell, d);
        // A blank ends a word; a cluster of several characters (a combining mark) stands alone,
        // so that each character of a word has its own cell.
        let blank = symbol.trim().is_empty() || here.hidden;
        let cluster = symbol.chars().count() > 1;
        if blank || cluster || look != Some(here) {
            word_out(&word, look, y, out);
            word.clear();
        }
        if blank {
            continue;
        }
        look = Some(here);
        word.push((col, symbol));
        if cluster {
            word_out(&word, look, y, out);
            word.clear();
        }
    }
    word_out(&word, look, y, out);
}

fn word_out(word: &[(u16, &str)], look: Option<Look>, y: f32, out: &mut String) {
    let (Some(look), false) = (look, word.is_empty()) else {
        return;
    };
    let xs: Vec<String> = word.iter().map(|(col, _)| format!("{:.1}", x_of(*col))).collect();
    let _ = write!(out, "<text x=\"{}\" y=\"{y:.1}\"{}>", xs.join(" "), look.attributes());
    for (_, symbol) in word {
        escape_xml(symbol, out);
    }
    out.push_str("</text>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;
    use ratatui::style::Style;

    #[test]
    fn palette() {
        assert_eq!(indexed(16), 0x000000);
        assert_eq!(indexed(196), 0xff0000);
        assert_eq!(indexed(232), 0x080808);
        assert_eq!(rgb(Color::Rgb(1, 2, 3), 0), Some(0x010203));
    }

    #[test]
    fn reversed_cells_swap_colours_and_words_break_on_style() {
        let mut buffer = Buffer::empty(Rect::new(0, 0, 6, 1));
        buffer.set_string(0, 0, "ab", Style::new().fg(Color::Rgb(255, 0, 0)));
        buffer.set_string(
            2,
            0,
            "cd",
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD),
        );
        let out = svg(&buffer, &Theme::default());
        assert!(
            out.contains("<text x=\"0.0 8.4\" y=\"14.0\" fill=\"#ff0000\">ab</text>"),
            "{out}"
        );
        assert!(
            out.contains("<rect x=\"16.8\" y=\"0.0\" width=\"16.8\" height=\"18.0\" fill=\"#d4d4d4\"/>"),
            "{out}"
        );
        assert!(out.contains("fill=\"#1e1e1e\" font-weight=\"bold\">cd</text>"), "{out}");
    }
}

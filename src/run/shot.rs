//! Screenshots: the screen drawn off-terminal, written as SVG (or HTML, by the file's extension).
//! `replay --snapshot` and the dashboard's screenshot key both use it.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;

use crate::app::App;
use crate::ui::svg;

/// The screen as the dashboard would draw it at `width`x`height`, at the app's time.
pub fn render(app: &mut App, width: u16, height: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("an off-screen terminal");
    super::render(&mut terminal, app).expect("an off-screen terminal draws");
    terminal.backend().buffer().clone()
}

/// The screen as a document: HTML for a `.html`/`.htm` file, SVG otherwise.
pub fn document(buffer: &Buffer, app: &App, path: &Path) -> String {
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("html" | "htm") => svg::html(buffer, app.theme()),
        _ => svg::svg(buffer, app.theme()),
    }
}

/// Writes the screen, at the size it was last drawn, to a new file at `path` (0600; never over a
/// file or through a link already there).
pub fn save(app: &mut App, path: &Path) -> io::Result<()> {
    let buffer = render(app, app.screen().width.max(1), app.screen().height.max(1));
    write_new(path, &document(&buffer, app, path))
}

/// A screenshot written to a new file: a file already at `path` is left as it is.
pub fn write_new(path: &Path, document: &str) -> io::Result<()> {
    crate::record::create_private(path)?.write_all(document.as_bytes())
}

/// The screenshot key: a new file in the current directory, named for the app's time.
pub fn save_here(app: &mut App) -> io::Result<PathBuf> {
    let stamp = app.now().to_zoned_datetime(app.tz().clone()).strftime("%Y%m%d-%H%M%S");
    let mut n = 1;
    loop {
        let path = match n {
            1 => PathBuf::from(format!("a2a-watch-{stamp}.svg")),
            _ => PathBuf::from(format!("a2a-watch-{stamp}-{n}.svg")),
        };
        match save(app, &path) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => n += 1,
            saved => return saved.map(|()| path),
        }
    }
}

//! A TCP relay in front of a demo agent: its address stays while what stands behind it is cut
//! or replaced, as a network that goes away or an agent restarted at the same address. The
//! relay holds its OS-chosen port for the whole test, so nothing else can take it meanwhile.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

pub(crate) struct Relay {
    pub(crate) port: u16,
    upstream: Arc<AtomicU16>,
    cut: Arc<AtomicBool>,
    links: Arc<tokio::sync::Mutex<JoinSet<()>>>,
}

impl Relay {
    pub(crate) async fn start(upstream: u16) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let upstream = Arc::new(AtomicU16::new(upstream));
        let cut = Arc::new(AtomicBool::new(false));
        let links = Arc::new(tokio::sync::Mutex::new(JoinSet::new()));
        let (u, c, l) = (upstream.clone(), cut.clone(), links.clone());
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if c.load(Ordering::SeqCst) {
                    continue; // dropped: connection refused, in effect
                }
                let upstream = u.load(Ordering::SeqCst);
                l.lock().await.spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(("127.0.0.1", upstream)).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
            }
        });
        Relay {
            port,
            upstream,
            cut,
            links,
        }
    }

    /// Cut: open connections end and new ones are dropped until the relay is joined again.
    pub(crate) async fn set_cut(&self, cut: bool) {
        self.cut.store(cut, Ordering::SeqCst);
        if cut {
            self.links.lock().await.abort_all();
        }
    }

    /// Where new connections go from now on.
    pub(crate) fn set_upstream(&self, port: u16) {
        self.upstream.store(port, Ordering::SeqCst);
    }

    /// The card of the agent at `url` with its interfaces pointed at the relay, in a file an
    /// agent spec can name, so every call goes through the relay.
    pub(crate) async fn card_file(&self, url: &str) -> PathBuf {
        let card = served_card(url).await;
        let port = url.rsplit(':').next().unwrap();
        let card = card.replace(&format!("127.0.0.1:{port}"), &format!("127.0.0.1:{}", self.port));
        let dir = std::env::temp_dir().join(format!("a2a-watch-relay-{}", self.port));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("card.json");
        std::fs::write(&file, card).unwrap();
        file
    }
}

/// The card the agent at `url` serves at its well-known path, as text.
pub(crate) async fn served_card(url: &str) -> String {
    reqwest::get(format!("{url}/.well-known/agent-card.json"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

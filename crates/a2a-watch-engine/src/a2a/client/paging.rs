//! ListTasks a page at a time: how many pages one listing reads, and the de-duplication of tasks
//! and page tokens that keeps a server which repeats itself from making us page forever.

use std::collections::HashSet;

use super::Client;
use crate::a2a::error::Result;
use crate::a2a::types::{ListTasksRequest, Task};

/// Pages read per listing at most: a server that always has another page cannot keep us paging.
pub const MAX_PAGES: usize = 1000;

/// What one listing found.
#[derive(Debug)]
pub struct Listing {
    pub tasks: Vec<Task>,
    /// More pages were offered than `list_pages` reads.
    pub cut: bool,
}

/// The pages of one listing (`Client::pages`).
pub struct Pages<'a> {
    client: &'a Client,
    /// The request for the next page; None once the last was read.
    next: Option<ListTasksRequest>,
    left: usize,
    seen: HashSet<String>,
    tokens: HashSet<String>,
    /// More pages were offered than the listing reads.
    pub cut: bool,
}

impl Pages<'_> {
    /// The next page's tasks not seen on an earlier page; None after the last page.
    pub async fn next(&mut self) -> Result<Option<Vec<Task>>> {
        let Some(request) = self.next.take() else {
            return Ok(None);
        };
        if self.left == 0 {
            self.cut = true;
            return Ok(None);
        }
        self.left -= 1;
        let resp = self.client.list_tasks(&request).await?;
        // A server that hands back a token it gave before would page forever.
        if !resp.next_page_token.is_empty() && self.tokens.insert(resp.next_page_token.clone()) {
            self.next = Some(ListTasksRequest {
                page_token: Some(resp.next_page_token),
                ..request
            });
        }
        let seen = &mut self.seen;
        Ok(Some(
            resp.tasks.into_iter().filter(|t| seen.insert(t.id.clone())).collect(),
        ))
    }
}

impl Client {
    /// Pages of ListTasks until the last or `max_pages`. Tasks that change while we page can move
    /// between pages (docs/protocol-notes.md, "ListTasks"), so ids are de-duplicated, keeping the
    /// first (newest) copy.
    pub async fn list_pages(&self, req: &ListTasksRequest, max_pages: usize) -> Result<Listing> {
        let mut pages = self.pages(req, max_pages);
        let mut tasks = Vec::new();
        while let Some(page) = pages.next().await? {
            tasks.extend(page);
        }
        Ok(Listing { tasks, cut: pages.cut })
    }

    /// `list_pages` a page at a time, so a caller need not hold every task at once (a watcher of
    /// 100,000 tasks would otherwise keep them all until the last page came).
    pub fn pages(&self, req: &ListTasksRequest, max_pages: usize) -> Pages<'_> {
        Pages {
            client: self,
            next: Some(req.clone()),
            left: max_pages,
            seen: HashSet::new(),
            tokens: HashSet::new(),
            cut: false,
        }
    }
}

//! The binary trace directory written by the agent. (Being written: see FORMAT.md.)

use crate::error::TraceError;
use crate::model::*;
use crate::source::EventSource;
use std::path::Path;

pub struct TraceReader {
    symbols: Symbols,
}

impl TraceReader {
    pub fn open(path: &Path) -> Result<TraceReader, TraceError> {
        Err(TraceError::Other { path: path.into(), msg: "binary traces are not supported yet".into() })
    }
}

impl EventSource for TraceReader {
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        Ok(None)
    }
    fn symbols(&self) -> &Symbols {
        &self.symbols
    }
    fn has_branches(&self) -> bool {
        false
    }
}

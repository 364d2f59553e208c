//! jrace's analyzer: detectors over one event model, and reports.

//! The instrumenter: rewrites a class so that its accesses, monitors, calls and branches
//! call the hooks of `jrace.rt.R` (agent/runtime/jrace/rt/R.java). Not written yet.

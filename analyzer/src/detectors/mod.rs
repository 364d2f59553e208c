//! The detectors, one module each, all behind [`crate::Detector`]; what each promises is
//! stated at the top of its module and summarized in [`crate::registry`].
//!
//! - Vector clocks, streaming: [`hb`] (happens-before), [`shb`] (schedulable hb, every
//!   race real), [`wcp`] (weak causal precedence), [`cp`] (causally-precedes, buffered
//!   windows), [`lockset`] (Eraser's warnings).
//! - [`m2`]: reorders conflicting critical sections; complete for two threads.
//! - The solver detectors on [`crate::causal`]'s shared encoding: [`mcm`], [`said`],
//!   [`rdit`].
//! - [`deadlock`]: predicted deadlocks rather than races.

pub mod cp;
pub mod deadlock;
pub mod hb;
pub mod lockset;
pub mod m2;
pub mod mcm;
pub mod rdit;
pub mod said;
pub mod shb;
pub mod wcp;

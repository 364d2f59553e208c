//! Virtual threads (JDK 21 and later): one trace thread each, not their carrier's.
//!
//! A virtual thread runs on a carrier (a platform thread of its scheduler) and may move
//! to another carrier whenever it parks. The recorder keeps a thread's state behind a
//! native thread-local, which belongs to the carrier: without help, a virtual thread's
//! events would land in whichever carrier's log ran them, splitting one thread's program
//! order over several logs and merging several threads into one (a monitor taken on one
//! carrier and released on another makes the trace ill-formed).
//!
//! So the agent asks for `can_support_virtual_threads` and listens to HotSpot's mount and
//! unmount events (JVMTI extension events `com.sun.hotspot.events.VirtualThreadMount` /
//! `VirtualThreadUnmount`, sent on the carrier with the virtual thread current): on mount
//! the carrier's context is set aside and the virtual thread's is put in its place; on
//! unmount it is kept in the virtual thread's JVMTI thread-local storage and the carrier's
//! comes back. `VirtualThreadEnd` ends the virtual thread's log like `ThreadEnd` does a
//! platform thread's. A hook never sees a switch half-way: a virtual thread with a native
//! frame on its stack (a hook) cannot unmount.
//!
//! A virtual thread's start is recorded where every start goes through,
//! `VirtualThread.start(ThreadContainer)` ([`crate::jdkhooks`]), so builders and
//! executors (`Thread.ofVirtual().start(r)`, `newVirtualThreadPerTaskExecutor`) fork it.
//! On older JDKs nothing here is enabled and nothing changes.

use crate::jvmti::*;
use std::ffi::{c_void, CStr};

/// `can_support_virtual_threads`: bit 44 of `jvmtiCapabilities` (JDK 21's `jvmti.h`; the
/// headers the agent is built with may be older and not name it).
const CAN_SUPPORT_VIRTUAL_THREADS_BIT: usize = 44;

/// `JVMTI_EVENT_VIRTUAL_THREAD_END` (JDK 21).
pub const VIRTUAL_THREAD_END: jvmtiEvent = 88;

/// JDK 21's event callback table: the one the headers know, then `VirtualThreadStart`
/// and `VirtualThreadEnd` (events 87 and 88).
#[repr(C)]
pub struct Callbacks21 {
    pub base: jvmtiEventCallbacks,
    pub virtual_thread_start: *mut c_void,
    pub virtual_thread_end: Option<unsafe extern "C" fn(*mut jvmtiEnv, *mut JNIEnv, jthread)>,
}

/// Asks for virtual thread support and registers the mount and unmount callbacks; true if
/// the JVM has virtual threads and both are in place (the caller then also enables
/// `VirtualThreadEnd` through [`Callbacks21`]).
///
/// # Safety
/// `jv` is a live JVMTI environment, in the `OnLoad` phase.
pub unsafe fn enable(jv: *mut jvmtiEnv) -> bool {
    let mut version: jint = 0;
    if crate::jvmti!(jv, GetVersionNumber, &mut version) != 0 {
        return false;
    }
    let major = (version as u32 & 0x0FFF_0000) >> 16;
    if major < 21 {
        return false;
    }
    let mut caps: jvmtiCapabilities = std::mem::zeroed();
    {
        let words = &mut *(&mut caps as *mut jvmtiCapabilities as *mut [u32; 4]);
        words[CAN_SUPPORT_VIRTUAL_THREADS_BIT / 32] |= 1 << (CAN_SUPPORT_VIRTUAL_THREADS_BIT % 32);
    }
    if crate::jvmti!(jv, AddCapabilities, &caps) != 0 {
        return false;
    }
    let mut n: jint = 0;
    let mut infos: *mut jvmtiExtensionEventInfo = std::ptr::null_mut();
    if crate::jvmti!(jv, GetExtensionEvents, &mut n, &mut infos) != 0 || infos.is_null() {
        return false;
    }
    let (mut mount, mut unmount) = (None, None);
    for info in std::slice::from_raw_parts(infos, n.max(0) as usize) {
        if info.id.is_null() {
            continue;
        }
        match CStr::from_ptr(info.id).to_bytes() {
            b"com.sun.hotspot.events.VirtualThreadMount" => {
                mount = Some(info.extension_event_index)
            }
            b"com.sun.hotspot.events.VirtualThreadUnmount" => {
                unmount = Some(info.extension_event_index)
            }
            _ => {}
        }
        crate::jvmti!(jv, Deallocate, info.id as *mut u8);
        crate::jvmti!(jv, Deallocate, info.short_description as *mut u8);
        if !info.params.is_null() {
            for p in std::slice::from_raw_parts(info.params, info.param_count.max(0) as usize) {
                crate::jvmti!(jv, Deallocate, p.name as *mut u8);
            }
            crate::jvmti!(jv, Deallocate, info.params as *mut u8);
        }
    }
    crate::jvmti!(jv, Deallocate, infos as *mut u8);
    let (Some(mount), Some(unmount)) = (mount, unmount) else {
        return false;
    };
    type Ext = unsafe extern "C" fn(*mut jvmtiEnv, *mut JNIEnv, jthread);
    type Variadic = unsafe extern "C" fn(*mut jvmtiEnv, ...);
    // SAFETY: HotSpot calls both with (jvmtiEnv*, JNIEnv*, jthread); the declared type is
    // variadic only because extension events differ in their parameters.
    let as_ext = |f: Ext| -> jvmtiExtensionEvent { Some(std::mem::transmute::<Ext, Variadic>(f)) };
    // An extension event needs its callback and, in HotSpot, enabling like any other.
    let on = |index: jint, f: Ext| {
        crate::jvmti!(jv, SetExtensionEventCallback, index, as_ext(f)) == 0
            && crate::jvmti!(
                jv,
                SetEventNotificationMode,
                jvmtiEventMode_JVMTI_ENABLE,
                index as jvmtiEvent,
                std::ptr::null_mut()
            ) == 0
    };
    on(mount, mounted) && on(unmount, unmounting)
}

unsafe extern "C" fn mounted(jv: *mut jvmtiEnv, _env: *mut JNIEnv, vthread: jthread) {
    crate::runtime::vthread_mounted(jv, vthread);
}

unsafe extern "C" fn unmounting(jv: *mut jvmtiEnv, _env: *mut JNIEnv, vthread: jthread) {
    crate::runtime::vthread_unmounting(jv, vthread);
}

/// `VirtualThreadEnd`.
///
/// # Safety
/// Called by the JVM, on the carrier of `vthread`.
pub unsafe extern "C" fn ended(jv: *mut jvmtiEnv, _env: *mut JNIEnv, vthread: jthread) {
    crate::runtime::vthread_ended(jv, vthread);
}

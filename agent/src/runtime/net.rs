//! TCP connections between threads of one JVM: a send is a volatile write, a receive a
//! volatile read, of a variable named by the connection's direction (jdkhooks.rs says why
//! and where the hooks sit). Both ends of a connection are different objects; what they
//! share is the pair of ports, which each end knows: the sender as (local, remote), the
//! receiver as (remote, local).

use super::*;
use crate::jnienv::take_exception;

/// JNI ids for the two socket implementations, looked up from the first hooked object
/// (its classes are loaded by then). `None`: the JDK's fields are not as expected, and
/// its connections are not modelled.
pub(super) struct NetIds {
    /// `java.net.SocketImpl.localport` and `.port` (`NioSocketImpl` inherits them).
    socket: OnceLock<Option<(jfieldID, jfieldID)>>,
    /// `SocketChannelImpl.localAddress`, `.remoteAddress`, `java.net.InetSocketAddress`
    /// and its `getPort()`.
    channel: OnceLock<Option<ChannelIds>>,
    /// The same for `AsynchronousSocketChannelImpl` (fields of type InetSocketAddress).
    async_channel: OnceLock<Option<ChannelIds>>,
}

struct ChannelIds {
    local: jfieldID,
    remote: jfieldID,
    inet: jclass,
    get_port: jmethodID,
}

impl NetIds {
    pub(super) const fn new() -> NetIds {
        NetIds {
            socket: OnceLock::new(),
            channel: OnceLock::new(),
            async_channel: OnceLock::new(),
        }
    }
}

const NIO_SOCKET: &str = "sun/nio/ch/NioSocketImpl";
const ASYNC_CHANNEL: &str = "sun/nio/ch/AsynchronousSocketChannelImpl";

impl Cx<'_> {
    /// A hooked socket `o` (of class `owner`) is about to send (`receive` false) or has
    /// received.
    pub(super) unsafe fn stream(&mut self, o: jobject, owner: &str, receive: bool, loc: u32) {
        let ports = match owner {
            NIO_SOCKET => self.socket_ports(o),
            ASYNC_CHANNEL => self.channel_ports(o, true),
            _ => self.channel_ports(o, false),
        };
        // Not connected (yet), or closed: nothing travels.
        let Some((local, remote)) = ports.filter(|&(l, r)| l > 0 && r > 0) else {
            return;
        };
        let (src, dst) = if receive {
            (remote, local)
        } else {
            (local, remote)
        };
        let name = format!("$tcp:{src}->{dst}");
        let sid = {
            let mut n = lock(&self.a.names);
            intern_static(self.a, &mut n, &name)
        };
        let v = self.field_var(0, sid);
        if receive {
            self.emit(Kind::VRead, v, loc, None, true);
            // What the program does next depends on the bytes (mcm keeps the read's writer).
            if self.a.opts.branches {
                self.emit(Kind::Branch, 0, loc, None, false);
            }
        } else {
            self.emit(Kind::VWrite, v, loc, None, true);
        }
    }

    unsafe fn socket_ports(&mut self, o: jobject) -> Option<(i32, i32)> {
        let env = self.env;
        let &(local, remote) = self
            .a
            .net
            .socket
            .get_or_init(|| field_pair(env, o, [c"localport", c"port"], c"I"))
            .as_ref()?;
        Some((
            jni!(env, GetIntField, o, local),
            jni!(env, GetIntField, o, remote),
        ))
    }

    /// `asynchronous`: an `AsynchronousSocketChannelImpl`, else a `SocketChannelImpl`.
    unsafe fn channel_ports(&mut self, o: jobject, asynchronous: bool) -> Option<(i32, i32)> {
        let env = self.env;
        let net = &self.a.net;
        let (cache, addr) = if asynchronous {
            (&net.async_channel, c"Ljava/net/InetSocketAddress;")
        } else {
            (&net.channel, c"Ljava/net/SocketAddress;")
        };
        let ids = cache
            .get_or_init(|| {
                let (local, remote) =
                    field_pair(env, o, [c"localAddress", c"remoteAddress"], addr)?;
                let inet = jni!(env, FindClass, c"java/net/InetSocketAddress".as_ptr());
                if take_exception(env) || inet.is_null() {
                    return None;
                }
                let get_port = jni!(env, GetMethodID, inet, c"getPort".as_ptr(), c"()I".as_ptr());
                take_exception(env);
                let inet = jni!(env, NewGlobalRef, inet) as jclass;
                (!get_port.is_null() && !inet.is_null()).then_some(ChannelIds {
                    local,
                    remote,
                    inet,
                    get_port,
                })
            })
            .as_ref()?;
        let port = |field| {
            let addr = jni!(env, GetObjectField, o, field);
            if addr.is_null() {
                return None; // not connected
            }
            // A Unix-domain channel has no ports: not modelled.
            let p = (jni!(env, IsInstanceOf, addr, ids.inet) != 0)
                .then(|| jni!(env, CallIntMethod, addr, ids.get_port));
            jni!(env, DeleteLocalRef, addr);
            p.filter(|_| !take_exception(env))
        };
        Some((port(ids.local)?, port(ids.remote)?))
    }
}

/// The ids of two fields of `o`'s class (or its supers) with descriptor `sig`; `None` (the
/// exception cleared) when either is missing.
unsafe fn field_pair(
    env: *mut JNIEnv,
    o: jobject,
    names: [&CStr; 2],
    sig: &CStr,
) -> Option<(jfieldID, jfieldID)> {
    let k = jni!(env, GetObjectClass, o);
    let a = jni!(env, GetFieldID, k, names[0].as_ptr(), sig.as_ptr());
    let b = jni!(env, GetFieldID, k, names[1].as_ptr(), sig.as_ptr());
    jni!(env, DeleteLocalRef, k);
    take_exception(env);
    (!a.is_null() && !b.is_null()).then_some((a, b))
}

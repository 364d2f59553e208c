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
            .get_or_init(|| {
                let k = jni!(env, GetObjectClass, o);
                let ids = (
                    jni!(env, GetFieldID, k, c"localport".as_ptr(), c"I".as_ptr()),
                    jni!(env, GetFieldID, k, c"port".as_ptr(), c"I".as_ptr()),
                );
                jni!(env, DeleteLocalRef, k);
                take_exception(env);
                (!ids.0.is_null() && !ids.1.is_null()).then_some(ids)
            })
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
                let k = jni!(env, GetObjectClass, o);
                let addr = addr.as_ptr();
                let local = jni!(env, GetFieldID, k, c"localAddress".as_ptr(), addr);
                let remote = jni!(env, GetFieldID, k, c"remoteAddress".as_ptr(), addr);
                jni!(env, DeleteLocalRef, k);
                take_exception(env);
                let inet = jni!(env, FindClass, c"java/net/InetSocketAddress".as_ptr());
                take_exception(env);
                if local.is_null() || remote.is_null() || inet.is_null() {
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
            // Not connected, or a Unix-domain channel (no ports): not modelled.
            if addr.is_null() || jni!(env, IsInstanceOf, addr, ids.inet) == 0 {
                return None;
            }
            let p = jni!(env, CallIntMethod, addr, ids.get_port);
            jni!(env, DeleteLocalRef, addr);
            (!take_exception(env)).then_some(p)
        };
        Some((port(ids.local)?, port(ids.remote)?))
    }
}

package dev.rlmmcp.kernel.process;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The seccomp filter (classic BPF, as bwrap's {@code --seccomp FD} takes it) of a sandboxed kernel.
 *
 * <p>It keeps a kernel from making user namespaces, where it would be uid 0 with every capability
 * and reach kernel code no unprivileged process reaches otherwise: {@code unshare} and {@code clone}
 * with CLONE_NEWUSER fail with EPERM; {@code clone3}, whose flags lie in memory a filter cannot read,
 * fails with ENOSYS, so glibc falls back to {@code clone} (threads and fork keep working).
 *
 * <p>It keeps a kernel from connecting to unix sockets: a service on the host that listens on a
 * socket the sandbox can see (in the data root, which is bound read-only, but a read-only mount
 * does not stop {@code connect} on a socket) would otherwise be reachable, while the network
 * namespace refuses TCP, UDP and abstract sockets. {@code socket(AF_UNIX, …)} fails with EACCES;
 * {@code socketpair} (another syscall, whose sockets are connected to each other only) keeps
 * working for stream and seqpacket sockets, and fails with EACCES for datagram ones, which could
 * still send to a socket by its path. io_uring, whose operations (socket, connect) no filter sees,
 * fails with ENOSYS, so its users fall back to plain syscalls.
 *
 * <p>It keeps a kernel's disk use measurable by file sizes ({@link DirQuota}): {@code fallocate}
 * (which can reserve blocks past a file's size) and the {@code setxattr} family (whose values take
 * blocks of their own) fail with EOPNOTSUPP; {@code posix_fallocate} then writes zeros instead.
 *
 * <p>Syscalls of any other ABI (i386 through int 0x80, x32) fail with EPERM, since their numbers
 * differ. Only x86_64 and aarch64 are known; elsewhere there is no filter.
 */
final class SyscallFilter {

    private static final int CLONE_NEWUSER = 0x10000000;
    private static final int X32_BIT = 0x40000000;
    private static final int AF_UNIX = 1;
    private static final int SOCK_TYPE_MASK = 0xf;
    private static final int SOCK_STREAM = 1;
    private static final int SOCK_SEQPACKET = 5;
    private static final int EPERM = 1;
    private static final int EACCES = 13;
    private static final int ENOSYS = 38;
    private static final int EOPNOTSUPP = 95;
    private static final int RET_ALLOW = 0x7fff0000;
    private static final int RET_ERRNO = 0x00050000;
    /** Offsets in struct seccomp_data: the syscall number, the audit arch, the low word of an argument (little-endian). */
    private static final int NR = 0;

    private static final int ARCH = 4;
    private static final int ARG0 = 16;
    private static final int ARG1 = 24;

    /**
     * AUDIT_ARCH and the syscall numbers of one architecture: clone, unshare, clone3, socket,
     * socketpair, io_uring_setup, and the calls refused as not supported (fallocate, setxattr,
     * lsetxattr, fsetxattr, setxattrat).
     */
    record Arch(
            int audit,
            int cloneNr,
            int unshare,
            int clone3,
            int socket,
            int socketpair,
            int ioUringSetup,
            int... unsupported) {}

    private SyscallFilter() {}

    /** The filter for this JVM's architecture, or empty where it is not known. */
    static Optional<byte[]> forThisMachine() {
        return arch(System.getProperty("os.arch")).map(SyscallFilter::program);
    }

    static Optional<Arch> arch(String osArch) {
        return switch (osArch) {
            case "amd64", "x86_64" ->
                Optional.of(new Arch(0xC000003E, 56, 272, 435, 41, 53, 425, 285, 188, 189, 190, 463));
            case "aarch64", "arm64" -> Optional.of(new Arch(0xC00000B7, 220, 97, 435, 198, 199, 425, 47, 5, 6, 7, 463));
            default -> Optional.empty();
        };
    }

    /** The program. */
    static byte[] program(Arch arch) {
        Program p = new Program();
        p.load(ARCH);
        p.jumpUnless(arch.audit(), "other-abi");
        p.load(NR);
        p.jumpIfAtLeast(X32_BIT, "other-abi");
        p.jumpIf(arch.clone3(), "enosys");
        p.jumpIf(arch.ioUringSetup(), "enosys");
        for (int nr : arch.unsupported()) {
            p.jumpIf(nr, "eopnotsupp");
        }
        p.jumpIf(arch.socket(), "socket");
        p.jumpIf(arch.socketpair(), "socketpair");
        p.jumpIf(arch.unshare(), "namespace-flags");
        p.jumpIf(arch.cloneNr(), "namespace-flags");
        p.ret(RET_ALLOW);
        p.label("namespace-flags");
        p.load(ARG0);
        p.jumpIfAnyBit(CLONE_NEWUSER, "eperm");
        p.ret(RET_ALLOW);
        p.label("socket");
        p.load(ARG0);
        p.jumpIf(AF_UNIX, "eacces");
        p.ret(RET_ALLOW);
        p.label("socketpair");
        p.load(ARG1);
        p.and(SOCK_TYPE_MASK);
        p.jumpIf(SOCK_STREAM, "allow");
        p.jumpIf(SOCK_SEQPACKET, "allow");
        p.label("eacces");
        p.ret(RET_ERRNO | EACCES);
        p.label("allow");
        p.ret(RET_ALLOW);
        p.label("other-abi");
        p.label("eperm");
        p.ret(RET_ERRNO | EPERM);
        p.label("enosys");
        p.ret(RET_ERRNO | ENOSYS);
        p.label("eopnotsupp");
        p.ret(RET_ERRNO | EOPNOTSUPP);
        return p.bytes();
    }

    /** A classic-BPF program with named forward jumps, resolved when it is turned into bytes. */
    private static final class Program {

        private static final short LD_W_ABS = 0x20;
        private static final short ALU_AND_K = 0x54;
        private static final short JEQ = 0x15;
        private static final short JGE = 0x35;
        private static final short JSET = 0x45;
        private static final short RET = 0x06;

        /** One instruction; a jump's target on true (or, for jumpUnless, on false) is a label. */
        private record Op(short code, int k, String onTrue, String onFalse) {}

        private final List<Op> ops = new ArrayList<>();
        private final Map<String, Integer> labels = new HashMap<>();

        void load(int offset) {
            ops.add(new Op(LD_W_ABS, offset, null, null));
        }

        void and(int mask) {
            ops.add(new Op(ALU_AND_K, mask, null, null));
        }

        void jumpIf(int value, String label) {
            ops.add(new Op(JEQ, value, label, null));
        }

        void jumpUnless(int value, String label) {
            ops.add(new Op(JEQ, value, null, label));
        }

        void jumpIfAtLeast(int value, String label) {
            ops.add(new Op(JGE, value, label, null));
        }

        void jumpIfAnyBit(int bits, String label) {
            ops.add(new Op(JSET, bits, label, null));
        }

        void ret(int action) {
            ops.add(new Op(RET, action, null, null));
        }

        void label(String name) {
            labels.put(name, ops.size());
        }

        /** The instructions; a jump counts the instructions after the next one. */
        byte[] bytes() {
            ByteBuffer out = ByteBuffer.allocate(ops.size() * 8).order(ByteOrder.nativeOrder());
            for (int i = 0; i < ops.size(); i++) {
                Op op = ops.get(i);
                out.putShort(op.code())
                        .put(offset(i, op.onTrue()))
                        .put(offset(i, op.onFalse()))
                        .putInt(op.k());
            }
            return out.array();
        }

        private byte offset(int at, String label) {
            if (label == null) {
                return 0;
            }
            int jump = labels.get(label) - at - 1;
            if (jump < 0 || jump > 255) {
                throw new IllegalStateException("jump to " + label + " out of range: " + jump);
            }
            return (byte) jump;
        }
    }
}

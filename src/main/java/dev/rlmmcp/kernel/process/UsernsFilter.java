package dev.rlmmcp.kernel.process;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Optional;

/**
 * A seccomp filter (classic BPF, as bwrap's {@code --seccomp FD} takes it) that keeps a kernel from
 * making user namespaces, where it would be uid 0 with every capability and reach kernel code no
 * unprivileged process reaches otherwise. {@code unshare} and {@code clone} with CLONE_NEWUSER fail
 * with EPERM; {@code clone3}, whose flags lie in memory a filter cannot read, fails with ENOSYS, so
 * glibc falls back to {@code clone} (threads and fork keep working). Syscalls of any other ABI (i386
 * through int 0x80, x32) fail with EPERM, since their numbers differ. Only x86_64 and aarch64 are
 * known; elsewhere there is no filter.
 *
 * <p>It also keeps a kernel's disk use measurable by file sizes ({@link DirQuota}): {@code fallocate}
 * (which can reserve blocks past a file's size) and the {@code setxattr} family (whose values take
 * blocks of their own) fail with EOPNOTSUPP; {@code posix_fallocate} then writes zeros instead.
 */
public final class UsernsFilter {

    private static final int CLONE_NEWUSER = 0x10000000;
    private static final int X32_BIT = 0x40000000;
    private static final int EPERM = 1;
    private static final int ENOSYS = 38;
    private static final int EOPNOTSUPP = 95;
    private static final int RET_ALLOW = 0x7fff0000;
    private static final int RET_ERRNO = 0x00050000;
    private static final short LD_ABS = 0x20;
    private static final short JEQ = 0x15;
    private static final short JGE = 0x35;
    private static final short JSET = 0x45;
    private static final short RET = 0x06;

    /**
     * AUDIT_ARCH and the numbers of clone, unshare and clone3 on one architecture, and of the calls
     * refused as not supported (fallocate, setxattr, lsetxattr, fsetxattr, setxattrat).
     */
    record Arch(int audit, int cloneNr, int unshare, int clone3, int... unsupported) {
    }

    private UsernsFilter() {
    }

    /** The filter for this JVM's architecture, or empty where it is not known. */
    public static Optional<byte[]> forThisMachine() {
        return arch(System.getProperty("os.arch")).map(UsernsFilter::program);
    }

    static Optional<Arch> arch(String osArch) {
        return switch (osArch) {
            case "amd64", "x86_64" -> Optional.of(new Arch(0xC000003E, 56, 272, 435, 285, 188, 189, 190, 463));
            case "aarch64", "arm64" -> Optional.of(new Arch(0xC00000B7, 220, 97, 435, 47, 5, 6, 7, 463));
            default -> Optional.empty();
        };
    }

    /** The program; jumps count instructions after the next one. */
    static byte[] program(Arch arch) {
        int n = arch.unsupported().length;
        int allow = 13 + n;
        ByteBuffer out = ByteBuffer.allocate((allow + 2) * 8).order(ByteOrder.nativeOrder());
        op(out, LD_ABS, 0, 0, 4);                      // 0: A = arch
        op(out, JEQ, 1, 0, arch.audit());              // 1: native? to 3
        op(out, RET, 0, 0, RET_ERRNO | EPERM);         // 2: another ABI
        op(out, LD_ABS, 0, 0, 0);                      // 3: A = syscall number
        op(out, JGE, 0, 1, X32_BIT);                   // 4: x32? to 5, else 6
        op(out, RET, 0, 0, RET_ERRNO | EPERM);         // 5
        op(out, JEQ, 0, 1, arch.clone3());             // 6: clone3? to 7, else 8
        op(out, RET, 0, 0, RET_ERRNO | ENOSYS);        // 7
        for (int i = 0; i < n; i++) {                  // 8 .. 8+n-1: to allow + 1
            op(out, JEQ, allow - (8 + i), 0, arch.unsupported()[i]);
        }
        op(out, JEQ, 1, 0, arch.unshare());            // 8+n: unshare? to 10+n
        op(out, JEQ, 0, 3, arch.cloneNr());            // 9+n: clone? to 10+n, else allow
        op(out, LD_ABS, 0, 0, 16);                     // 10+n: A = low word of the first argument (flags)
        op(out, JSET, 0, 1, CLONE_NEWUSER);            // 11+n: CLONE_NEWUSER? to 12+n, else allow
        op(out, RET, 0, 0, RET_ERRNO | EPERM);         // 12+n
        op(out, RET, 0, 0, RET_ALLOW);                 // 13+n: allow
        op(out, RET, 0, 0, RET_ERRNO | EOPNOTSUPP);    // 14+n
        return out.array();
    }

    private static void op(ByteBuffer out, short code, int jt, int jf, int k) {
        out.putShort(code).put((byte) jt).put((byte) jf).putInt(k);
    }
}

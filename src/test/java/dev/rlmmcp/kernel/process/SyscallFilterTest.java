package dev.rlmmcp.kernel.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** The seccomp program, run by a small classic-BPF interpreter over seccomp_data. */
class SyscallFilterTest {

    private static final int ALLOW = 0x7fff0000;
    private static final int EPERM = 0x00050001;
    private static final int ENOSYS = 0x00050000 | 38;
    private static final int EOPNOTSUPP = 0x00050000 | 95;
    private static final int EACCES = 0x00050000 | 13;
    private static final int NEWUSER = 0x10000000;
    private static final int AF_UNIX = 1;
    private static final int AF_INET = 2;
    private static final int SOCK_STREAM = 1;
    private static final int SOCK_DGRAM = 2;
    private static final int SOCK_SEQPACKET = 5;
    private static final int SOCK_CLOEXEC = 0x80000;

    @Test
    void x86_64() {
        byte[] program = SyscallFilter.program(SyscallFilter.arch("amd64").orElseThrow());
        int x86 = 0xC000003E;
        assertThat(run(program, x86, 272, NEWUSER)).isEqualTo(EPERM); // unshare(CLONE_NEWUSER)
        assertThat(run(program, x86, 272, NEWUSER | 0x20000)).isEqualTo(EPERM);
        assertThat(run(program, x86, 272, 0x20000)).isEqualTo(ALLOW); // unshare(CLONE_NEWNS): the kernel's own checks
        assertThat(run(program, x86, 56, NEWUSER | 17)).isEqualTo(EPERM); // clone
        assertThat(run(program, x86, 56, 0x003d0f00)).isEqualTo(ALLOW); // clone as pthread_create calls it
        assertThat(run(program, x86, 435, 0)).isEqualTo(ENOSYS); // clone3
        assertThat(run(program, x86, 285, 1)).isEqualTo(EOPNOTSUPP); // fallocate
        assertThat(run(program, x86, 190, 0)).isEqualTo(EOPNOTSUPP); // fsetxattr
        assertThat(run(program, x86, 1, 0)).isEqualTo(ALLOW); // write
        assertThat(run(program, x86, 0x40000000 | 272, NEWUSER)).isEqualTo(EPERM); // x32
        assertThat(run(program, 0x40000003, 310, NEWUSER)).isEqualTo(EPERM); // i386 unshare
        assertThat(run(program, x86, 41, AF_UNIX, SOCK_STREAM)).isEqualTo(EACCES); // socket(AF_UNIX)
        assertThat(run(program, x86, 41, AF_INET, SOCK_STREAM)).isEqualTo(ALLOW); // the network namespace's business
        assertThat(run(program, x86, 53, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC)).isEqualTo(ALLOW); // socketpair
        assertThat(run(program, x86, 53, AF_UNIX, SOCK_SEQPACKET)).isEqualTo(ALLOW);
        assertThat(run(program, x86, 53, AF_UNIX, SOCK_DGRAM)).isEqualTo(EACCES);
        assertThat(run(program, x86, 53, AF_UNIX, 3)).isEqualTo(EACCES); // SOCK_RAW: a datagram socket
        assertThat(run(program, x86, 425, 8, 0)).isEqualTo(ENOSYS); // io_uring_setup
        assertThat(run(program, x86, 42, 3, 0)).isEqualTo(ALLOW); // connect: its socket was refused already
    }

    @Test
    void aarch64() {
        byte[] program = SyscallFilter.program(SyscallFilter.arch("aarch64").orElseThrow());
        int arm = 0xC00000B7;
        assertThat(run(program, arm, 97, NEWUSER)).isEqualTo(EPERM);
        assertThat(run(program, arm, 220, NEWUSER)).isEqualTo(EPERM);
        assertThat(run(program, arm, 220, 0x003d0f00)).isEqualTo(ALLOW);
        assertThat(run(program, arm, 435, 0)).isEqualTo(ENOSYS);
        assertThat(run(program, arm, 47, 0)).isEqualTo(EOPNOTSUPP);
        assertThat(run(program, arm, 64, 0)).isEqualTo(ALLOW);
        assertThat(run(program, 0xC000003E, 272, NEWUSER)).isEqualTo(EPERM);
        assertThat(run(program, arm, 198, AF_UNIX, SOCK_STREAM)).isEqualTo(EACCES);
        assertThat(run(program, arm, 198, AF_INET, SOCK_DGRAM)).isEqualTo(ALLOW);
        assertThat(run(program, arm, 199, AF_UNIX, SOCK_STREAM)).isEqualTo(ALLOW);
        assertThat(run(program, arm, 199, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC)).isEqualTo(EACCES);
        assertThat(run(program, arm, 425, 8, 0)).isEqualTo(ENOSYS);
    }

    @Test
    void otherArchitecturesGetNoFilter() {
        assertThat(SyscallFilter.arch("riscv64")).isEmpty();
        assertThat(SyscallFilter.arch("x86")).isEmpty();
    }

    private static int run(byte[] program, int arch, int nr, int arg0) {
        return run(program, arch, nr, arg0, 0);
    }

    /** Runs the program over seccomp_data {nr, arch, ip, args[0], args[1]}: only the opcodes it uses. */
    private static int run(byte[] program, int arch, int nr, int arg0, int arg1) {
        ByteBuffer data = ByteBuffer.allocate(64)
                .order(ByteOrder.nativeOrder())
                .putInt(0, nr)
                .putInt(4, arch)
                .putLong(16, arg0)
                .putLong(24, arg1);
        ByteBuffer code = ByteBuffer.wrap(program).order(ByteOrder.nativeOrder());
        int a = 0;
        for (int pc = 0; pc < program.length / 8; pc++) {
            int op = code.getShort(pc * 8) & 0xffff;
            int jt = code.get(pc * 8 + 2) & 0xff;
            int jf = code.get(pc * 8 + 3) & 0xff;
            int k = code.getInt(pc * 8 + 4);
            switch (op) {
                case 0x20 -> a = data.getInt(k);
                case 0x54 -> a &= k;
                case 0x15 -> pc += a == k ? jt : jf;
                case 0x35 -> pc += Integer.compareUnsigned(a, k) >= 0 ? jt : jf;
                case 0x45 -> pc += (a & k) != 0 ? jt : jf;
                case 0x06 -> {
                    return k;
                }
                default -> throw new AssertionError("opcode " + op);
            }
        }
        throw new AssertionError("ran off the end");
    }
}

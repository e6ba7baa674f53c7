package dev.rlmmcp.kernel.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** The seccomp program, run by a small classic-BPF interpreter over seccomp_data. */
class UsernsFilterTest {

    private static final int ALLOW = 0x7fff0000;
    private static final int EPERM = 0x00050001;
    private static final int ENOSYS = 0x00050000 | 38;
    private static final int EOPNOTSUPP = 0x00050000 | 95;
    private static final int NEWUSER = 0x10000000;

    @Test
    void x86_64() {
        byte[] program = UsernsFilter.program(UsernsFilter.arch("amd64").orElseThrow());
        int x86 = 0xC000003E;
        assertThat(run(program, x86, 272, NEWUSER)).isEqualTo(EPERM);        // unshare(CLONE_NEWUSER)
        assertThat(run(program, x86, 272, NEWUSER | 0x20000)).isEqualTo(EPERM);
        assertThat(run(program, x86, 272, 0x20000)).isEqualTo(ALLOW);        // unshare(CLONE_NEWNS): the kernel's own checks
        assertThat(run(program, x86, 56, NEWUSER | 17)).isEqualTo(EPERM);    // clone
        assertThat(run(program, x86, 56, 0x003d0f00)).isEqualTo(ALLOW);      // clone as pthread_create calls it
        assertThat(run(program, x86, 435, 0)).isEqualTo(ENOSYS);             // clone3
        assertThat(run(program, x86, 285, 1)).isEqualTo(EOPNOTSUPP);         // fallocate
        assertThat(run(program, x86, 190, 0)).isEqualTo(EOPNOTSUPP);         // fsetxattr
        assertThat(run(program, x86, 1, 0)).isEqualTo(ALLOW);                // write
        assertThat(run(program, x86, 0x40000000 | 272, NEWUSER)).isEqualTo(EPERM); // x32
        assertThat(run(program, 0x40000003, 310, NEWUSER)).isEqualTo(EPERM);      // i386 unshare
    }

    @Test
    void aarch64() {
        byte[] program = UsernsFilter.program(UsernsFilter.arch("aarch64").orElseThrow());
        int arm = 0xC00000B7;
        assertThat(run(program, arm, 97, NEWUSER)).isEqualTo(EPERM);
        assertThat(run(program, arm, 220, NEWUSER)).isEqualTo(EPERM);
        assertThat(run(program, arm, 220, 0x003d0f00)).isEqualTo(ALLOW);
        assertThat(run(program, arm, 435, 0)).isEqualTo(ENOSYS);
        assertThat(run(program, arm, 47, 0)).isEqualTo(EOPNOTSUPP);
        assertThat(run(program, arm, 64, 0)).isEqualTo(ALLOW);
        assertThat(run(program, 0xC000003E, 272, NEWUSER)).isEqualTo(EPERM);
    }

    @Test
    void otherArchitecturesGetNoFilter() {
        assertThat(UsernsFilter.arch("riscv64")).isEmpty();
        assertThat(UsernsFilter.arch("x86")).isEmpty();
    }

    /** Runs the program over seccomp_data {nr, arch, ip, args[0] = arg0}: only the opcodes it uses. */
    private static int run(byte[] program, int arch, int nr, int arg0) {
        ByteBuffer data = ByteBuffer.allocate(64).order(ByteOrder.nativeOrder()).putInt(0, nr).putInt(4, arch).putLong(16, arg0);
        ByteBuffer code = ByteBuffer.wrap(program).order(ByteOrder.nativeOrder());
        int a = 0;
        for (int pc = 0; pc < program.length / 8; pc++) {
            int op = code.getShort(pc * 8) & 0xffff;
            int jt = code.get(pc * 8 + 2) & 0xff;
            int jf = code.get(pc * 8 + 3) & 0xff;
            int k = code.getInt(pc * 8 + 4);
            switch (op) {
                case 0x20 -> a = data.getInt(k);
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

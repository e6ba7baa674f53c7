package dev.rlmmcp.kernel.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The harness package written from the build's classes: layout, permissions, reuse. */
class HarnessTest {

    @TempDir
    Path dir;

    @Test
    void installsThePackageAndABootstrapReadOnly() throws Exception {
        Path harness = Harness.install(dir);

        assertThat(harness.getParent()).isEqualTo(dir);
        assertThat(harness.getFileName().toString()).matches("harness-[0-9a-f]{12}");
        assertThat(Files.readString(harness.resolve("__main__.py"))).isEqualTo(Harness.BOOTSTRAP);
        for (String file : new String[] {"__init__.py", "__main__.py", "main.py", "protocol.py", "kernel.py"}) {
            Path path = harness.resolve("rlm_harness").resolve(file);
            assertThat(path).isRegularFile();
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(path))).isEqualTo("r--r--r--");
        }
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(harness))).isEqualTo("r-xr-xr-x");
        try (Stream<Path> files = Files.list(harness.resolve("rlm_harness"))) {
            assertThat(files.map(p -> p.getFileName().toString())).allMatch(name -> name.endsWith(".py"));
        }
    }

    @Test
    void aSecondInstallReusesTheFirstAndLeavesNoTemporaryDirectory() throws Exception {
        Path first = Harness.install(dir);
        Path second = Harness.install(dir);

        assertThat(second).isEqualTo(first);
        try (Stream<Path> entries = Files.list(dir)) {
            assertThat(entries).containsExactly(first);
        }
    }

    @Test
    void thePackageFilesAreListedFromTheClasses() throws Exception {
        assertThat(Harness.packageFiles()).containsKeys("__init__.py", "main.py", "protocol.py", "store.py")
                .allSatisfy((name, code) -> assertThat(code).isNotEmpty());
    }
}

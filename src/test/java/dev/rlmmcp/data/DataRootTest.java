package dev.rlmmcp.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DataRootTest {

    @TempDir
    Path tmp;

    private Path root;
    private DataRoot dataRoot;

    @BeforeEach
    void setUp() throws Exception {
        root = Files.createDirectories(tmp.resolve("root"));
        Files.createDirectories(root.resolve("logs"));
        Files.writeString(root.resolve("logs/app.log"), "hello");
        Files.writeString(tmp.resolve("secret.txt"), "no");
        dataRoot = new DataRoot(root);
    }

    private ErrorCode refusal(String path) {
        try {
            dataRoot.resolve("path", path);
        } catch (RlmException e) {
            assertThat(e.argument()).isEqualTo("path");
            assertThat(e.fix()).isNotBlank();
            return e.code();
        }
        throw new AssertionError(path + " was accepted");
    }

    @Test
    void acceptsRelativeAndAbsolutePathsInside() throws Exception {
        Path real = root.resolve("logs/app.log").toRealPath();
        assertThat(dataRoot.resolve("path", "logs/app.log")).isEqualTo(real);
        assertThat(dataRoot.resolve("path", "./logs/../logs/app.log")).isEqualTo(real);
        assertThat(dataRoot.resolve("path", real.toString())).isEqualTo(real);
    }

    @Test
    void refusesEscapes() throws Exception {
        assertThat(refusal("../secret.txt")).isEqualTo(ErrorCode.PATH_OUTSIDE_DATA_ROOT);
        assertThat(refusal("logs/../../secret.txt")).isEqualTo(ErrorCode.PATH_OUTSIDE_DATA_ROOT);
        assertThat(refusal(tmp.resolve("secret.txt").toString())).isEqualTo(ErrorCode.PATH_OUTSIDE_DATA_ROOT);
        assertThat(refusal("/etc/passwd")).isEqualTo(ErrorCode.PATH_OUTSIDE_DATA_ROOT);
        Files.createSymbolicLink(root.resolve("link.txt"), tmp.resolve("secret.txt"));
        assertThat(refusal("link.txt")).isEqualTo(ErrorCode.PATH_OUTSIDE_DATA_ROOT);
        Files.createSymbolicLink(root.resolve("up"), tmp);
        assertThat(refusal("up/secret.txt")).isEqualTo(ErrorCode.PATH_OUTSIDE_DATA_ROOT);
    }

    @Test
    void followsSymlinksThatStayInside() throws Exception {
        Files.createSymbolicLink(root.resolve("current.log"), root.resolve("logs/app.log"));
        assertThat(dataRoot.resolve("path", "current.log"))
                .isEqualTo(root.resolve("logs/app.log").toRealPath());
    }

    @Test
    void refusesMissingFilesDirectoriesAndEmptyPaths() {
        assertThat(refusal("nope.txt")).isEqualTo(ErrorCode.FILE_NOT_FOUND);
        assertThat(refusal("logs")).isEqualTo(ErrorCode.INVALID_ARGUMENT);
        assertThat(refusal(" ")).isEqualTo(ErrorCode.INVALID_ARGUMENT);
        assertThat(refusal("a\0b")).isEqualTo(ErrorCode.INVALID_ARGUMENT);
        assertThatThrownBy(() -> dataRoot.resolve("path", null)).isInstanceOf(RlmException.class);
    }
}

package dev.rlmmcp.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** serve's cluster options: a missing or bad piece refuses to start with one line naming the option. */
class ClusterOptionsTest {

    @TempDir
    Path dir;

    private static List<String> errors(String... args) {
        CommandLine cmd = Main.commandLine();
        StringWriter err = new StringWriter();
        cmd.setErr(new PrintWriter(err, true));
        int exit = cmd.execute(Stream.concat(Stream.of("serve", "--port", "0"), Stream.of(args))
                .toArray(String[]::new));
        assertThat(exit).isEqualTo(2);
        return err.toString().lines().toList();
    }

    private String secretFile(String secret) throws Exception {
        Path file = dir.resolve("secret");
        Files.writeString(file, secret + "\n");
        return file.toString();
    }

    @Test
    void clusterModeNeedsTheSnapshotStoreTheNodeAddressAndTheSecret() throws Exception {
        assertThat(errors("--cluster-db", "postgresql://rlm:pw@db/rlm").getFirst())
                .isEqualTo("rlm-mcp serve: --cluster-db needs --snapshot-s3 s3://bucket/prefix: the nodes share "
                        + "sessions' variables there");
        assertThat(errors("--cluster-db", "postgresql://db/rlm", "--snapshot-s3", "s3://rlm-sessions/p")
                        .getFirst())
                .contains("--cluster-db needs --node-address host:port");
        assertThat(errors(
                                "--cluster-db", "postgresql://db/rlm",
                                "--snapshot-s3", "s3://rlm-sessions/p",
                                "--node-address", "10.0.0.5")
                        .getFirst())
                .contains("--node-address: '10.0.0.5' is not host:port");
        assertThat(errors(
                                "--cluster-db", "postgresql://db/rlm",
                                "--snapshot-s3", "s3://rlm-sessions/p",
                                "--node-address", "127.0.0.1:9000",
                                "--cluster-secret-file", secretFile("short"))
                        .getFirst())
                .contains("must have at least 16 characters");
        assertThat(errors(
                                "--cluster-db", "postgresql://db/rlm",
                                "--snapshot-s3", "s3://rlm-sessions/p",
                                "--node-address", "127.0.0.1:9000",
                                "--cluster-secret-file", secretFile("a-long-enough-secret"),
                                "--cluster-lease-ms", "10")
                        .getFirst())
                .contains("--cluster-lease-ms must be 400..600000, not 10");
    }

    @Test
    void aBadSnapshotStoreIsNamedBeforeTheDatabaseIsJoined() {
        assertThat(errors("--cluster-db", "postgresql://db/rlm", "--snapshot-s3", "s3://b/p")
                        .getFirst())
                .isEqualTo("rlm-mcp serve: --snapshot-s3: 'b' in 's3://b/p' is not a valid bucket name");
    }

    @Test
    void clusterOptionsWithoutTheClusterDatabaseAreRefused() {
        assertThat(errors("--node-address", "127.0.0.1:9000").getFirst())
                .isEqualTo("rlm-mcp serve: --node-address is for cluster mode: it needs --cluster-db");
    }

    @Test
    void aBadDatabaseUrlIsNamedWithItsPasswordMasked() throws Exception {
        List<String> err = errors(
                "--cluster-db", "mysql://rlm:hunter2@db/rlm",
                "--snapshot-s3", "s3://rlm-sessions/p",
                "--node-address", "127.0.0.1:9000",
                "--cluster-secret-file", secretFile("a-long-enough-secret"));
        assertThat(err.getFirst()).startsWith("rlm-mcp serve: --cluster-db mysql://rlm:***@db/rlm: ");
        assertThat(String.join("\n", err)).doesNotContain("hunter2", "a-long-enough-secret");
    }
}

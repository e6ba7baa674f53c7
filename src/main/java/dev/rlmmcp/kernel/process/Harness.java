package dev.rlmmcp.kernel.process;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** The Python side of the kernel, shipped in the jar and written once to a private directory. */
public final class Harness {

    private static final String RESOURCE = "harness.py";

    private Harness() {
    }

    /** Writes the harness under {@code dir} (named by its content hash, so versions never mix) and returns its path. */
    public static Path install(Path dir) {
        try (InputStream in = Harness.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("harness.py is missing from the jar");
            }
            byte[] code = in.readAllBytes();
            String hash = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(code), 0, 6);
            Files.createDirectories(dir);
            Path target = dir.resolve("harness-" + hash + ".py");
            if (!Files.exists(target)) {
                Path temp = Files.createTempFile(dir, "harness", ".tmp");
                Files.write(temp, code);
                Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("r--r--r--"));
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            }
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot install the kernel harness in " + dir, e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}

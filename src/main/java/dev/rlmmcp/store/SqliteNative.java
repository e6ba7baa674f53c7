package dev.rlmmcp.store;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sqlite.util.LibraryLoaderUtil;

/**
 * SQLite's native library, written once to a private directory (named by its content hash) and
 * loaded from there. Left to itself, sqlite-jdbc extracts a fresh copy to the temp directory at
 * every start: slower, and copies stay behind whenever the process is killed.
 */
final class SqliteNative {

    private static final Logger log = LoggerFactory.getLogger(SqliteNative.class);

    private SqliteNative() {}

    /** Points sqlite-jdbc at its library in {@code dir}; if that cannot be done, it extracts its own as usual. */
    static synchronized void install(Path dir) {
        if (System.getProperty("org.sqlite.lib.path") != null) {
            return;
        }
        String resource = LibraryLoaderUtil.getNativeLibResourcePath() + "/" + LibraryLoaderUtil.getNativeLibName();
        try (InputStream in = SqliteNative.class.getResourceAsStream(resource)) {
            if (in == null) {
                return;
            }
            byte[] library = in.readAllBytes();
            String hash = HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(library), 0, 8);
            String name = "sqlite-" + hash + "-" + LibraryLoaderUtil.getNativeLibName();
            Files.createDirectories(dir);
            Path target = dir.resolve(name);
            if (!Files.exists(target)) {
                Path temp = Files.createTempFile(dir, "sqlite", ".tmp");
                Files.write(temp, library);
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            }
            System.setProperty("org.sqlite.lib.path", dir.toString());
            System.setProperty("org.sqlite.lib.name", name);
        } catch (IOException | RuntimeException e) {
            log.debug("SQLite's library not installed in {} ({}); sqlite-jdbc extracts its own", dir, e.toString());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}

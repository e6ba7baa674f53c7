package dev.rlmmcp.testsupport;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A service on the host listening on a unix socket that anyone may connect to (mode 0777), as the
 * sandbox tests need: it counts the connections it accepts, on a thread of its own, until closed.
 */
public final class UnixListener implements AutoCloseable {

    private final Path path;
    private final ServerSocketChannel channel;
    private final AtomicInteger accepted = new AtomicInteger();
    private final Thread acceptor;

    private UnixListener(Path path, ServerSocketChannel channel) {
        this.path = path;
        this.channel = channel;
        this.acceptor = Thread.ofPlatform().daemon().name("unix-listener").start(this::accept);
    }

    /** Listens at {@code path}; the parent directories it makes are readable and searchable by all. */
    public static UnixListener at(Path path) throws IOException {
        Path missing = null;
        for (Path dir = path.getParent(); dir != null && !Files.exists(dir); dir = dir.getParent()) {
            missing = dir;
        }
        Files.createDirectories(path.getParent());
        for (Path dir = path.getParent(); missing != null && dir.startsWith(missing); dir = dir.getParent()) {
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        ServerSocketChannel channel = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        channel.bind(UnixDomainSocketAddress.of(path));
        Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rwxrwxrwx"));
        return new UnixListener(path, channel);
    }

    private void accept() {
        while (channel.isOpen()) {
            try (SocketChannel client = channel.accept()) {
                accepted.incrementAndGet();
                client.write(java.nio.ByteBuffer.wrap("hello from the host\n".getBytes()));
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    /**
     * Kernel code that tries to connect to each socket, catching what is raised, prints {@code CONNECTED}
     * or {@code refused <exception> <errno>} for each, whether the first is visible and writable to it,
     * then uses a socketpair and a multiprocessing Pipe to a forked process, which must keep working.
     */
    public static String kernelCode(Path visible, Path... others) {
        StringBuilder paths = new StringBuilder("'" + visible + "'");
        for (Path other : others) {
            paths.append(", '").append(other).append("'");
        }
        return """
                import multiprocessing, os, socket, stat
                print('visible', stat.S_ISSOCK(os.stat('%s').st_mode), os.access('%s', os.W_OK))
                for path in [%s]:
                    try:
                        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                        s.settimeout(2)
                        s.connect(path)
                        print('CONNECTED', path, s.recv(100))
                    except OSError as e:
                        print('refused', type(e).__name__, e.errno)
                a, b = socket.socketpair()
                a.sendall(b'ping')
                print('socketpair', b.recv(4).decode())
                def double(conn):
                    conn.send(conn.recv() * 2)
                parent, child = multiprocessing.Pipe()
                worker = multiprocessing.Process(target=double, args=(child,))
                worker.start()
                parent.send(21)
                print('pipe', parent.recv())
                worker.join()
                """.formatted(visible, visible, paths);
    }

    /** What {@link #kernelCode} prints when every connect is refused by the sandbox and the rest works. */
    public static String refusedOutput(int sockets) {
        return "visible True True\n" + "refused PermissionError 13\n".repeat(sockets) + "socketpair ping\npipe 42\n";
    }

    public Path path() {
        return path;
    }

    /** Connections accepted so far. */
    public int accepted() {
        return accepted.get();
    }

    @Override
    public void close() throws IOException {
        channel.close();
        Files.deleteIfExists(path);
        try {
            acceptor.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

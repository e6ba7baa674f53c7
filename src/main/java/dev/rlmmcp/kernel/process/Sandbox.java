package dev.rlmmcp.kernel.process;

import java.nio.file.Path;
import java.util.Optional;
import java.util.function.Supplier;

/** {@code --sandbox}: which launcher starts kernels; {@code auto} takes the strongest this machine offers. */
public final class Sandbox {

    public static final String MODES = "auto, bwrap, container, process";

    private Sandbox() {}

    /**
     * The launcher for {@code mode}, or an {@link IllegalArgumentException} that says why it is not
     * available: a launcher asked for by name never silently falls back to a weaker one.
     * {@code container} finds a container runtime with a configured image, or nothing.
     */
    public static KernelLauncher select(
            String mode,
            Path runtimeDir,
            long diskLimitBytes,
            SnapshotCutBack snapshotCutBack,
            Supplier<Optional<? extends KernelLauncher>> container) {
        return switch (mode) {
            case "auto" ->
                container
                        .get()
                        .<KernelLauncher>map(l -> l)
                        .or(() -> BwrapLauncher.detect(runtimeDir, diskLimitBytes, snapshotCutBack))
                        .orElseGet(ProcessLauncher::new);
            case "bwrap" ->
                BwrapLauncher.detect(runtimeDir, diskLimitBytes, snapshotCutBack)
                        .orElseThrow(
                                () -> new IllegalArgumentException(
                                        "--sandbox bwrap: bubblewrap is not installed or cannot create namespaces here"
                                                + " (install the bubblewrap package, allow unprivileged user namespaces, or choose another --sandbox)"));
            case "container" ->
                container
                        .get()
                        .<KernelLauncher>map(l -> l)
                        .orElseThrow(
                                () -> new IllegalArgumentException(
                                        "--sandbox container: no working podman or docker with a configured kernel image was found"));
            case "process" -> new ProcessLauncher();
            default -> throw new IllegalArgumentException("--sandbox must be one of " + MODES + ", not '" + mode + "'");
        };
    }
}

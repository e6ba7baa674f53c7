package dev.rlmmcp.kernel.process;

import java.nio.file.Path;
import java.util.List;

/**
 * What a launcher needs to start one kernel: the interpreter, the harness (the directory {@link Harness#install}
 * made, run as {@code python -I -B <harness>}) and its arguments,
 * the working directory, the directories the kernel may read, the one directory it may write (its
 * session's snapshot; null for none) and one it must not see even inside a readable one (the state
 * directory, with every session's data; null for none), each at its host path.
 */
public record KernelSpec(
        Path python,
        Path harness,
        List<String> harnessArgs,
        Path workDir,
        List<Path> readOnlyDirs,
        Path writableDir,
        Path hiddenDir) {

    public KernelSpec(Path python, Path harness, List<String> harnessArgs, Path workDir, List<Path> readOnlyDirs) {
        this(python, harness, harnessArgs, workDir, readOnlyDirs, null, null);
    }

    /** True if the hidden directory lies inside a directory the kernel may read. */
    public boolean hides() {
        return hiddenDir != null && readOnlyDirs.stream().anyMatch(dir -> hiddenDir.startsWith(dir));
    }

    public List<String> pythonCommand() {
        var command = new java.util.ArrayList<String>();
        command.add(python.toString());
        command.add("-I");
        command.add("-B");
        command.add(harness.toString());
        command.addAll(harnessArgs);
        return command;
    }
}

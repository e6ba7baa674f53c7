package dev.rlmmcp.core.kernel;

import java.nio.file.Path;
import java.util.List;

/**
 * What a launcher needs to start one kernel: the interpreter, the harness and its arguments,
 * the working directory and the directories the kernel may read.
 */
public record KernelSpec(Path python, Path harness, List<String> harnessArgs, Path workDir, List<Path> readOnlyDirs) {

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

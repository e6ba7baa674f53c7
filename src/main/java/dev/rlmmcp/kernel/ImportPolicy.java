package dev.rlmmcp.kernel;

import java.util.List;

/**
 * Which modules user code may import by name: a guard rail against honest mistakes, never security
 * (print.__self__.__import__('os') walks past any such list; the sandbox is the boundary).
 * An empty {@code allowed} list allows every module that is not {@code blocked}.
 */
public record ImportPolicy(List<String> allowed, List<String> blocked) {

    /** The default guard rail, after seed 000's blocked list (os, subprocess, socket, requests, ...). */
    public static final String SEED_BLOCKED = "os,subprocess,socket,shutil,ctypes,multiprocessing,requests,urllib3,http";

    public static final ImportPolicy OFF = new ImportPolicy(List.of(), List.of());

    public ImportPolicy {
        allowed = List.copyOf(allowed);
        blocked = List.copyOf(blocked);
    }
}

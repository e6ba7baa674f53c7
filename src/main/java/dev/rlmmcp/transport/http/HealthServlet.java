package dev.rlmmcp.transport.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.kernel.KernelBudget;
import dev.rlmmcp.transport.Version;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryType;
import java.time.Duration;
import java.time.Instant;

/** GET /health: liveness plus the figures an operator looks at first. */
final class HealthServlet extends HttpServlet {

    private final Sessions sessions;
    private final ObjectMapper json;
    private final Instant started = Instant.now();

    HealthServlet(Sessions sessions, ObjectMapper json) {
        this.sessions = sessions;
        this.json = json;
    }

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        Runtime rt = Runtime.getRuntime();
        ObjectNode body = json.createObjectNode();
        body.put("status", "ok");
        body.put("version", Version.current());
        body.put("uptime_s", Duration.between(started, Instant.now()).toSeconds());
        body.put("sessions", sessions.all().size());
        body.put("kernels", sessions.all().stream().filter(Session::hasKernel).count());
        body.put("sandbox", sessions.kernels().launcherName());
        body.put("cgroup", sessions.kernels().cgroup());
        body.put("cgroup_limits", sessions.kernels().cgroupLimits());
        KernelBudget budget = sessions.kernels().budget();
        ObjectNode capacity = body.putObject("capacity");
        capacity.put("kernels_running", sessions.kernels().sessionKernels());
        capacity.put("warm_kernels", sessions.kernels().warmKernels());
        capacity.put("warm_kernels_target", sessions.kernels().warmTarget());
        capacity.put("kernels_waiting", budget.waiting());
        capacity.put("max_kernels", budget.maxKernels());
        capacity.put("memory_used_bytes", budget.usedBytes());
        capacity.put("max_memory_bytes", budget.maxBytes());
        var python = sessions.kernels().pythonIfKnown();
        if (python != null) {
            body.put("python", python.executable().toString());
            body.put("python_version", python.version());
        }
        ObjectNode memory = body.putObject("memory");
        memory.put("jvm_heap_used_bytes", rt.totalMemory() - rt.freeMemory());
        memory.put("jvm_heap_max_bytes", rt.maxMemory());
        memory.put("jvm_heap_peak_bytes", heapPeak());
        memory.put("session_limit_bytes", sessions.kernels().settings().memoryLimitBytes());
        response.setHeader("Cache-Control", "no-store");
        JsonResponse.write(response, 200, json.writeValueAsBytes(body));
    }

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.setHeader("Allow", "GET");
        JsonResponse.refuseUnread(request, response, 405, -32600, "GET only");
    }

    /** The heap's high-water mark since start: the sum of each heap pool's peak (an upper bound). */
    private static long heapPeak() {
        return ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(pool -> pool.getType() == MemoryType.HEAP)
                .mapToLong(pool -> pool.getPeakUsage().getUsed())
                .sum();
    }
}

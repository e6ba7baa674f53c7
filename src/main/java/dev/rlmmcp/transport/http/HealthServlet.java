package dev.rlmmcp.transport.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.KernelHealth;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
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
        KernelHealth kernels = sessions.health();
        body.put("sandbox", kernels.sandbox());
        body.put("cgroup", kernels.cgroup());
        body.put("cgroup_limits", kernels.cgroupLimits());
        ObjectNode capacity = body.putObject("capacity");
        capacity.put("kernels_running", kernels.kernelsRunning());
        capacity.put("warm_kernels", kernels.warmKernels());
        capacity.put("warm_kernels_target", kernels.warmTarget());
        capacity.put("kernels_waiting", kernels.kernelsWaiting());
        capacity.put("max_kernels", kernels.maxKernels());
        capacity.put("memory_used_bytes", kernels.memoryUsedBytes());
        capacity.put("max_memory_bytes", kernels.maxMemoryBytes());
        if (kernels.python() != null) {
            body.put("python", kernels.python());
            body.put("python_version", kernels.pythonVersion());
        }
        ObjectNode memory = body.putObject("memory");
        memory.put("jvm_heap_used_bytes", rt.totalMemory() - rt.freeMemory());
        memory.put("jvm_heap_max_bytes", rt.maxMemory());
        memory.put("jvm_heap_peak_bytes", heapPeak());
        memory.put("session_limit_bytes", kernels.sessionLimitBytes());
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

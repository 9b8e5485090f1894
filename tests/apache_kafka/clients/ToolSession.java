// Kafka's own command-line tools, run one after another in one JVM (a JVM start per tool would
// cost two seconds each): every invocation's main() is called with System.in, System.out and
// System.err of its own, and the tools' Exit.exit() ends only that invocation.
// Run as a single source file on the Kafka jars:
//   java -cp 'tests/apache_kafka/lib/4.4.0/*' ToolSession.java SESSION_FILE OUT_DIR
// SESSION_FILE has one invocation per line, tab-separated: the main class, a file to read as
// standard input (or "-" for none), then the arguments. For invocation N (from 0) OUT_DIR gets
// N.out and N.err (what it printed) and N.rc (its exit code: the first Exit.exit() code, as a
// tool's own catch-all may call exit again on the way out; 70 and the stack trace in N.err if
// main threw, 0 if it returned).
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import org.apache.kafka.common.utils.internals.Exit;

public class ToolSession {
    static final class ExitCalled extends RuntimeException {
        final int code;

        ExitCalled(int code) {
            super("exit " + code, null, false, false);
            this.code = code;
        }
    }

    static volatile Integer firstExit;

    static void exit(int code) {
        if (firstExit == null) firstExit = code;
        throw new ExitCalled(code);
    }

    public static void main(String[] args) throws Exception {
        List<String> lines = Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8);
        Path out = Path.of(args[1]);
        Files.createDirectories(out);
        Exit.setExitProcedure((code, message) -> exit(code));
        Exit.setHaltProcedure((code, message) -> exit(code));
        Exit.setShutdownHookAdder((name, runnable) -> { });
        PrintStream stdout = System.out, stderr = System.err;
        InputStream stdin = System.in;
        int n = 0;
        for (String line : lines) {
            if (line.isBlank()) continue;
            String[] fields = line.split("\t", -1);
            String[] toolArgs = Arrays.copyOfRange(fields, 2, fields.length);
            byte[] input = fields[1].equals("-") ? new byte[0] : Files.readAllBytes(Path.of(fields[1]));
            ByteArrayOutputStream o = new ByteArrayOutputStream(), e = new ByteArrayOutputStream();
            PrintStream po = new PrintStream(o, true, StandardCharsets.UTF_8);
            PrintStream pe = new PrintStream(e, true, StandardCharsets.UTF_8);
            int rc = 0;
            firstExit = null;
            System.setIn(new ByteArrayInputStream(input));
            System.setOut(po);
            System.setErr(pe);
            try {
                Method main = Class.forName(fields[0]).getMethod("main", String[].class);
                main.invoke(null, (Object) toolArgs);
            } catch (InvocationTargetException ex) {
                Throwable cause = ex.getCause();
                if (cause instanceof ExitCalled) {
                    rc = firstExit;
                } else if (firstExit != null) {
                    rc = firstExit;  // the tool wrapped our exit in an exception of its own
                } else {
                    rc = 70;
                    cause.printStackTrace(new PrintWriter(pe, true));
                }
            } finally {
                po.flush();
                pe.flush();
                System.setOut(stdout);
                System.setErr(stderr);
                System.setIn(stdin);
            }
            if (firstExit != null) rc = firstExit;
            Files.write(out.resolve(n + ".out"), o.toByteArray());
            Files.write(out.resolve(n + ".err"), e.toByteArray());
            Files.writeString(out.resolve(n + ".rc"), Integer.toString(rc));
            n++;
        }
        System.exit(0);
    }
}

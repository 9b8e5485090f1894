import java.io.BufferedWriter;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import org.apache.kafka.image.node.MetadataImageNode;
import org.apache.kafka.shell.MetadataShell;
import org.apache.kafka.shell.command.Commands;
import org.apache.kafka.shell.state.MetadataShellState;

/**
 * kafka-metadata-shell on one file, for several commands in one JVM: args are FILE, the offset
 * of its last record, then commands separated by "--next"; each command's output is followed
 * by a line "--end--". The file is loaded as the shell's main loads it (MetadataShell.run,
 * here with a command whose output is dropped); the shell's wait for the load (until the
 * loader has applied anything) can return before the last batch is published, so this waits
 * until the image holds the last record, then runs the commands through the shell's own
 * Commands parser on its state. The shell's main itself is not used: kafka-shell is published
 * up to 4.3.1, whose main calls classes Kafka 4.4 moved (the two small classes beside this
 * file stand in for them).
 */
public class MetadataShellRun {
    public static void main(String[] args) throws Exception {
        long lastOffset = Long.parseLong(args[1]);
        List<List<String>> commands = new ArrayList<>();
        commands.add(new ArrayList<>());
        for (String arg : Arrays.asList(args).subList(2, args.length)) {
            if (arg.equals("--next")) {
                commands.add(new ArrayList<>());
            } else {
                commands.get(commands.size() - 1).add(arg);
            }
        }
        PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(
            new FileOutputStream(FileDescriptor.out), StandardCharsets.UTF_8)));
        System.setOut(new PrintStream(OutputStream.nullOutputStream()));
        MetadataShell shell = new MetadataShell.Builder().setSnapshotPath(args[0]).build();
        try {
            shell.run(List.of("ls", "/"));
            Field field = MetadataShell.class.getDeclaredField("state");
            field.setAccessible(true);
            MetadataShellState state = (MetadataShellState) field.get(shell);
            long deadline = System.currentTimeMillis() + 60_000;
            while (((MetadataImageNode) state.root().child("image")).image().offset() < lastOffset
                   && System.currentTimeMillis() < deadline) {
                Thread.sleep(10);
            }
            for (List<String> command : commands) {
                new Commands(false).parseCommand(command).run(Optional.empty(), out, state);
                out.println("--end--");
            }
            out.flush();
        } finally {
            shell.close();
        }
        Runtime.getRuntime().halt(0);
    }
}

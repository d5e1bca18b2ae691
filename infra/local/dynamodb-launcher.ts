/**
 * DynamoDB Local has no bind-address option: its DynamoDBProxyServer builds `new Server(port)` (Jetty),
 * whose one connector listens on every interface, and whoever reaches it reads every table with no
 * authentication. No JVM or Jetty system property changes a connector's host either. So the runtime
 * starts it through a launcher class that does what DynamoDB Local's own `main` does, except that it
 * sets the connector's host to loopback before the server starts:
 *
 *   public class LoopbackDynamoDbLocal {
 *     public static void main(String[] args) throws Exception {
 *       DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
 *       Field server = DynamoDBProxyServer.class.getDeclaredField("server");
 *       server.setAccessible(true);
 *       ((ServerConnector) ((Server) server.get(proxy)).getConnectors()[0]).setHost("127.0.0.1");
 *       proxy.start();
 *     }
 *   }
 *
 * Users may have a JRE only (no javac, and often no jdk.compiler for `java Launcher.java`), and a
 * committed .class file is an opaque binary. So the class file is written here, from the code above,
 * as javac compiles it (class file format, JVMS §4): hand-written because it is one straight-line
 * method, which needs no stack map frames, and no package for it is installed. The JVM verifies it when
 * it loads it; should DynamoDB Local ever rename what it calls, the launcher fails and the runtime
 * does not start (it never falls back to listening everywhere).
 */

export const LAUNCHER_CLASS = 'LoopbackDynamoDbLocal';

const SERVER_RUNNER = 'software/amazon/dynamodb/services/local/main/ServerRunner';
const PROXY_SERVER = 'software/amazon/dynamodb/services/local/server/DynamoDBProxyServer';
const JETTY_SERVER = 'org/eclipse/jetty/server/Server';
const SERVER_CONNECTOR = 'org/eclipse/jetty/server/ServerConnector';

/** A class file's constant pool (JVMS §4.4), entries deduplicated. */
class ConstantPool {
  private readonly entries: Buffer[] = [];
  private readonly index = new Map<string, number>();

  private add(key: string, bytes: Buffer): number {
    const known = this.index.get(key);
    if (known !== undefined) return known;
    this.entries.push(bytes);
    const i = this.entries.length; // indexes start at 1; no Long/Double entries here
    this.index.set(key, i);
    return i;
  }

  utf8(s: string): number {
    const data = Buffer.from(s, 'utf8'); // ASCII only here, where modified UTF-8 is the same
    return this.add(`U:${s}`, Buffer.concat([Buffer.from([1]), u2(data.length), data]));
  }

  classRef(name: string): number {
    return this.add(`C:${name}`, Buffer.concat([Buffer.from([7]), u2(this.utf8(name))]));
  }

  string(s: string): number {
    return this.add(`S:${s}`, Buffer.concat([Buffer.from([8]), u2(this.utf8(s))]));
  }

  private nameAndType(name: string, descriptor: string): number {
    return this.add(`N:${name}:${descriptor}`, Buffer.concat([Buffer.from([12]), u2(this.utf8(name)), u2(this.utf8(descriptor))]));
  }

  methodRef(owner: string, name: string, descriptor: string): number {
    return this.add(`M:${owner}.${name}${descriptor}`, Buffer.concat([Buffer.from([10]), u2(this.classRef(owner)), u2(this.nameAndType(name, descriptor))]));
  }

  bytes(): Buffer {
    return Buffer.concat([u2(this.entries.length + 1), ...this.entries]);
  }
}

function u2(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}

function u4(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

// The opcodes used (JVMS §6.5).
const OP = {
  iconst_0: 0x03,
  iconst_1: 0x04,
  ldc_w: 0x13,
  aload_0: 0x2a,
  aload_1: 0x2b,
  aload_2: 0x2c,
  aaload: 0x32,
  astore_1: 0x4c,
  astore_2: 0x4d,
  return: 0xb1,
  invokevirtual: 0xb6,
  invokestatic: 0xb8,
  checkcast: 0xc0,
} as const;

/** The launcher's class file: `main` binds DynamoDB Local's connector to `host` before starting it. */
export function launcherClassFile(host: string): Buffer {
  const cp = new ConstantPool();
  const thisClass = cp.classRef(LAUNCHER_CLASS);
  const superClass = cp.classRef('java/lang/Object');
  const op = (code: number, index?: number) => Buffer.from(index === undefined ? [code] : [code, index >> 8, index & 0xff]);
  const code = Buffer.concat([
    op(OP.aload_0),
    op(OP.invokestatic, cp.methodRef(SERVER_RUNNER, 'createServerFromCommandLineArgs', `([Ljava/lang/String;)L${PROXY_SERVER};`)),
    op(OP.astore_1),
    op(OP.ldc_w, cp.classRef(PROXY_SERVER)),
    op(OP.ldc_w, cp.string('server')),
    op(OP.invokevirtual, cp.methodRef('java/lang/Class', 'getDeclaredField', '(Ljava/lang/String;)Ljava/lang/reflect/Field;')),
    op(OP.astore_2),
    op(OP.aload_2),
    op(OP.iconst_1),
    op(OP.invokevirtual, cp.methodRef('java/lang/reflect/Field', 'setAccessible', '(Z)V')),
    op(OP.aload_2),
    op(OP.aload_1),
    op(OP.invokevirtual, cp.methodRef('java/lang/reflect/Field', 'get', '(Ljava/lang/Object;)Ljava/lang/Object;')),
    op(OP.checkcast, cp.classRef(JETTY_SERVER)),
    op(OP.invokevirtual, cp.methodRef(JETTY_SERVER, 'getConnectors', '()[Lorg/eclipse/jetty/server/Connector;')),
    op(OP.iconst_0),
    op(OP.aaload),
    op(OP.checkcast, cp.classRef(SERVER_CONNECTOR)),
    op(OP.ldc_w, cp.string(host)),
    op(OP.invokevirtual, cp.methodRef(SERVER_CONNECTOR, 'setHost', '(Ljava/lang/String;)V')),
    op(OP.aload_1),
    op(OP.invokevirtual, cp.methodRef(PROXY_SERVER, 'start', '()V')),
    op(OP.return),
  ]);
  const maxStack = 2;
  const maxLocals = 3; // args, proxy, server field
  const codeAttribute = Buffer.concat([u2(maxStack), u2(maxLocals), u4(code.length), code, u2(0) /* exception table */, u2(0) /* attributes */]);
  const main = Buffer.concat([
    u2(0x0009), // public static
    u2(cp.utf8('main')),
    u2(cp.utf8('([Ljava/lang/String;)V')),
    u2(1),
    u2(cp.utf8('Code')),
    u4(codeAttribute.length),
    codeAttribute,
  ]);
  return Buffer.concat([
    u4(0xcafebabe),
    u2(0), // minor version
    u2(52), // major version: Java 8, which every JVM that runs DynamoDB Local (17+) loads
    cp.bytes(),
    u2(0x0021), // public, super
    u2(thisClass),
    u2(superClass),
    u2(0), // interfaces
    u2(0), // fields
    u2(1), // methods
    main,
    u2(0), // attributes
  ]);
}

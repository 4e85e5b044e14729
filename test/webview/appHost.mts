// A minimal MCP Apps host page for run-card-app.test.ts, bundled for Chromium at test time: ext-apps' own host
// side (AppBridge) frames an App's HTML as hosts do (a sandboxed frame with scripts and an opaque origin), hands
// it a tool call's input and result, and passes the App's tool calls to `window.callTool`, which the test
// answers from a real MCP client of the real server. A .mts file: ext-apps is an ES module only.
import {
  AppBridge,
  PostMessageTransport,
  type McpUiToolResultNotification,
} from '@modelcontextprotocol/ext-apps/app-bridge';

type ToolResult = McpUiToolResultNotification['params'];

declare global {
  interface Window {
    callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<ToolResult>;
    showApp(html: string, input: Record<string, unknown>, result: ToolResult): Promise<void>;
  }
}

window.showApp = async (html, input, result) => {
  const frame = document.createElement('iframe');
  frame.sandbox.add('allow-scripts');
  frame.style.cssText = 'width: 800px; height: 900px; border: 0';
  frame.srcdoc = html;
  document.body.append(frame);
  const bridge = new AppBridge(null, { name: 'test-host', version: '1.0.0' }, { serverTools: {} });
  bridge.oncalltool = (params) => window.callTool(params);
  bridge.oninitialized = () => {
    void bridge.sendToolInput({ arguments: input });
    void bridge.sendToolResult(result);
  };
  await bridge.connect(new PostMessageTransport(frame.contentWindow!, frame.contentWindow!));
};

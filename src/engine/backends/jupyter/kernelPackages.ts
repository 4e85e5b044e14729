// Installs and checks for a Jupyter session: pip runs where the kernel does, with the kernel's interpreter
// (as `%pip` would), through a support cell; then the running kernel is made to see what it installed, or
// the report says it needs a restart.
import { KEPT_OUTPUT_CHARS, pipCheck, pipInstall, type PipProcess, type ProcessResult } from '../../packages/pip';
import type { PackageSpec, RequirementSpec } from '../../packages/spec';
import type { InstallOptions, PackageReport } from '../../types';
import { publishedValue, SUPPORT_CELL_MESSAGES } from './kernelMessages';
import type { KernelHandle } from './kernelTypes';
import { supportCell } from './supportCells';

/** What to do about a kernel whose Python the operating system manages (PEP 668): a kernel spec of a venv's. */
function managedKernelAdvice(kernelSetting: string | undefined): string {
  return `give the kernel a virtual environment of its own (python -m venv ENV; ENV/bin/python -m pip install ipykernel; ENV/bin/python -m ipykernel install --user --name NAME, on the Jupyter server's machine) and choose that kernel spec${kernelSetting ? `: ${kernelSetting}` : ''}`;
}

export class KernelPackages {
  /** `kernelSetting`: how the front end names the kernel-spec setting, for the PEP 668 advice. */
  constructor(
    private readonly kernel: () => Promise<KernelHandle>,
    private readonly kernelSetting: () => string | undefined,
  ) {}

  async install(specs: PackageSpec[], options: InstallOptions): Promise<PackageReport> {
    const report = await pipInstall(this.pipProcess, specs, options.wheelhouse, {
      wheelhouseSetting: options.wheelhouseSetting,
      managedEnvironment: managedKernelAdvice(this.kernelSetting()),
    });
    const installed = report.packages.filter((status) => status.installed).map((status) => status.name);
    if (installed.length === 0) return report;
    const unseen = await this.refreshImports(installed);
    if (unseen.length === 0) return report;
    return {
      ...report,
      message: `${report.message} The running kernel cannot import ${unseen.join(', ')} yet: start a new kernel (run_python with reset: true) to use ${unseen.length === 1 ? 'it' : 'them'}.`,
    };
  }

  check(specs: RequirementSpec[]): Promise<PackageReport> {
    return pipCheck(this.pipProcess, specs);
  }

  /** The distributions of `names` the running kernel still cannot see after refreshing its import paths. */
  private async refreshImports(names: string[]): Promise<string[]> {
    const kernel = await this.kernel();
    const reply = await kernel.execute(supportCell('refresh', { names }), SUPPORT_CELL_MESSAGES);
    const published = publishedValue(reply) as { unseen?: unknown } | undefined;
    return Array.isArray(published?.unseen)
      ? published.unseen.filter((name): name is string => typeof name === 'string')
      : names;
  }

  private readonly pipProcess: PipProcess = async (args, env, timeoutMs) => {
    const kernel = await this.kernel();
    const reply = await kernel.execute(
      supportCell('process', { args, env, timeoutMs, keptChars: KEPT_OUTPUT_CHARS }),
      SUPPORT_CELL_MESSAGES,
    );
    return (
      (publishedValue(reply) as ProcessResult | undefined) ?? {
        code: null,
        stdout: '',
        stderr: '',
        timedOut: false,
        spawnError: `the kernel could not run it (${reply.ename ?? reply.status}: ${reply.evalue ?? ''})`,
      }
    );
  };
}

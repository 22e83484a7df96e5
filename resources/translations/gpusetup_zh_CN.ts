<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
  <context>
    <name>gpusetup</name>
    <message>
      <source>This part of gpusetup is not available in this version ({feature}).</source>
      <translation>此版本的 gpusetup 尚不提供这一部分（{feature}）。</translation>
    </message>
    <message>
      <source>Demonstration on a recorded machine ({what}): nothing on this computer is changed.</source>
      <translation>演示模式：使用一台示例电脑的录制数据（{what}），不会改动这台电脑上的任何内容。</translation>
    </message>
    <message>
      <source>No recommendation (the version checker is not available in this version).</source>
      <translation>无推荐（此版本不提供版本检查功能）。</translation>
    </message>
    <message>
      <source>no build fits this computer</source>
      <translation>没有适合这台电脑的版本</translation>
    </message>
    <message>
      <source>What do you want to run?</source>
      <translation>您想运行什么？</translation>
    </message>
    <message>
      <source>Pick one or more frameworks and where to install them. What works best on your computer is already ticked.</source>
      <translation>选择一个或多个框架以及安装位置。已勾选最适合这台电脑的选项。</translation>
    </message>
    <message>
      <source>Frameworks</source>
      <translation>框架</translation>
    </message>
    <message>
      <source>Where</source>
      <translation>安装位置</translation>
    </message>
    <message>
      <source>A new virtual environment (recommended)</source>
      <translation>新的虚拟环境（推荐）</translation>
    </message>
    <message>
      <source>An existing virtual environment</source>
      <translation>已有的虚拟环境</translation>
    </message>
    <message>
      <source>A conda environment</source>
      <translation>conda 环境</translation>
    </message>
    <message>
      <source>A Docker setup (files to build a container)</source>
      <translation>Docker 配置（用于构建容器的文件）</translation>
    </message>
    <message>
      <source>Folder for the new virtual environment</source>
      <translation>新虚拟环境的文件夹</translation>
    </message>
    <message>
      <source>Choose…</source>
      <translation>选择…</translation>
    </message>
    <message>
      <source>Choose the folder for the new virtual environment</source>
      <translation>选择新虚拟环境的文件夹</translation>
    </message>
    <message>
      <source>Existing virtual environment to use</source>
      <translation>要使用的已有虚拟环境</translation>
    </message>
    <message>
      <source>Name of the conda environment</source>
      <translation>conda 环境名称</translation>
    </message>
    <message>
      <source>Folder for the Docker files</source>
      <translation>Docker 文件所在文件夹</translation>
    </message>
    <message>
      <source>Choose the folder for the Docker files</source>
      <translation>选择 Docker 文件所在文件夹</translation>
    </message>
    <message>
      <source>Already have a framework installed? The test can prove it where it is, without installing anything.</source>
      <translation>已经装好框架了？可以直接在它所在的环境中验证，无需安装任何东西。</translation>
    </message>
    <message>
      <source>Only &amp;check an environment I have…</source>
      <translation>只验证已有的环境(&amp;C)…</translation>
    </message>
    <message>
      <source>Only check an environment I have</source>
      <translation>只验证已有的环境</translation>
    </message>
    <message>
      <source>Working out which versions fit your computer…</source>
      <translation>正在确定适合这台电脑的版本…</translation>
    </message>
    <message>
      <source>Checking which versions work with your graphics card and driver…</source>
      <translation>正在检查哪些版本适用于这块显卡和驱动程序…</translation>
    </message>
    <message>
      <source>A separate folder with its own Python packages: nothing else on your computer is touched, and deleting the folder removes it all.</source>
      <translation>一个单独的文件夹，里面有自己的一套 Python 包：不会改动电脑上的其他内容，删除这个文件夹即可全部清除。</translation>
    </message>
    <message>
      <source>Possible: {version} ({variant}) after a step first: {why}</source>
      <translation>可以安装：{version}（{variant}），但需先完成一步：{why}</translation>
    </message>
    <message>
      <source>Only the CPU version {version} can be installed here.</source>
      <translation>这里只能安装 CPU 版本 {version}。</translation>
    </message>
    <message>
      <source>Not possible on this computer: {why}</source>
      <translation>无法在这台电脑上安装：{why}</translation>
    </message>
    <message>
      <source>Folder:</source>
      <translation>文件夹：</translation>
    </message>
    <message>
      <source>Name:</source>
      <translation>名称：</translation>
    </message>
    <message>
      <source>No virtual environment was found. gpusetup installs only into a virtual or conda environment, never into the system's own Python.</source>
      <translation>未找到虚拟环境。gpusetup 只安装到虚拟环境或 conda 环境中，绝不安装到系统自带的 Python。</translation>
    </message>
    <message>
      <source>conda was not found on this computer. Choose a new virtual environment instead.</source>
      <translation>这台电脑上没有找到 conda。请改选新的虚拟环境。</translation>
    </message>
    <message>
      <source>Docker setups are not available in this version of gpusetup.</source>
      <translation>此版本的 gpusetup 不提供 Docker 配置。</translation>
    </message>
    <message>
      <source>Packages are added to this virtual environment; packages you already had are kept, and undo removes only what was added.</source>
      <translation>软件包将添加到这个虚拟环境中；原有的软件包会保留，撤销时只移除新添加的部分。</translation>
    </message>
    <message>
      <source>Recommended: {version}, CPU version (it works, without the graphics card).</source>
      <translation>推荐：{version}，CPU 版本（可以运行，但不使用显卡）。</translation>
    </message>
    <message>
      <source>Recommended: {version} ({variant}); works with your graphics card now.</source>
      <translation>推荐：{version}（{variant}）；现在即可使用您的显卡。</translation>
    </message>
    <message>
      <source>You can still choose, but we cannot recommend versions.</source>
      <translation>您仍然可以选择，但我们无法推荐版本。</translation>
    </message>
    <message>
      <source>The version checker gave no answer for this framework.</source>
      <translation>版本检查没有给出这个框架的结果。</translation>
    </message>
    <message>
      <source>We ticked what works best with your graphics card. Hover over a framework to see the options we left out.</source>
      <translation>已勾选最适合这块显卡的选项。将鼠标悬停在框架上可查看未选用的选项。</translation>
    </message>
    <message>
      <source>Packages are installed into this conda environment (created if it does not exist).</source>
      <translation>软件包将安装到这个 conda 环境中（不存在时会自动创建）。</translation>
    </message>
    <message>
      <source>Working out the versions failed: {error}</source>
      <translation>无法确定可用的版本：{error}</translation>
    </message>
    <message>
      <source>Only the CPU versions can be installed on this computer; they work, only more slowly. We ticked the first one.</source>
      <translation>这台电脑上只能安装 CPU 版本；它们可以运行，只是速度较慢。我们已勾选第一个。</translation>
    </message>
    <message>
      <source>We write a Dockerfile and a compose file into the folder; nothing is installed on this computer.</source>
      <translation>我们会把 Dockerfile 和 compose 文件写入该文件夹；不会在这台电脑上安装任何东西。</translation>
    </message>
    <message>
      <source>Nothing works with your graphics card right away; the plan will show what to do first.</source>
      <translation>目前没有可以直接使用这块显卡的版本；安装计划会说明需要先做什么。</translation>
    </message>
    <message>
      <source>None of the frameworks can be installed on this computer; hover over each to see why.</source>
      <translation>这台电脑上无法安装任何框架；将鼠标悬停在各项上可查看原因。</translation>
    </message>
    <message>
      <source>Options we did not pick:</source>
      <translation>未选用的选项：</translation>
    </message>
    <message>
      <source>Docker is not installed yet; the plan shows how to install it.</source>
      <translation>尚未安装 Docker；安装计划会说明如何安装。</translation>
    </message>
    <message>
      <source>Done</source>
      <translation>完成</translation>
    </message>
    <message>
      <source>Here is what happened. Keep the report, or send a support bundle if something is not right.</source>
      <translation>以下是本次操作的结果。请保存报告；如果有问题，可以发送支持包。</translation>
    </message>
    <message>
      <source>Summary</source>
      <translation>摘要</translation>
    </message>
    <message>
      <source>Keep a record</source>
      <translation>保存记录</translation>
    </message>
    <message>
      <source>Save report (&amp;HTML)…</source>
      <translation>保存报告（HTML）(&amp;H)…</translation>
    </message>
    <message>
      <source>Save report (&amp;JSON)…</source>
      <translation>保存报告（JSON）(&amp;J)…</translation>
    </message>
    <message>
      <source>Create a &amp;support bundle…</source>
      <translation>创建支持包(&amp;S)…</translation>
    </message>
    <message>
      <source>Open the &amp;log folder</source>
      <translation>打开日志文件夹(&amp;L)</translation>
    </message>
    <message>
      <source>Web page (*.html)</source>
      <translation>网页 (*.html)</translation>
    </message>
    <message>
      <source>JSON (*.json)</source>
      <translation>JSON (*.json)</translation>
    </message>
    <message>
      <source>Save the report</source>
      <translation>保存报告</translation>
    </message>
    <message>
      <source>Save the support bundle</source>
      <translation>保存支持包</translation>
    </message>
    <message>
      <source>Zip file (*.zip)</source>
      <translation>Zip 文件 (*.zip)</translation>
    </message>
    <message>
      <source>Creating the support bundle…</source>
      <translation>正在创建支持包…</translation>
    </message>
    <message>
      <source>A support bundle is a zip file with the report and logs, with personal details (user names, host name, serial numbers) removed. Send it to whoever helps you.</source>
      <translation>支持包是一个包含报告和日志的 zip 文件，其中的个人信息（用户名、主机名、序列号）已被移除。请把它发给为您提供帮助的人。</translation>
    </message>
    <message>
      <source>no graphics card</source>
      <translation>没有显卡</translation>
    </message>
    <message>
      <source>Nothing was installed.</source>
      <translation>没有安装任何东西。</translation>
    </message>
    <message>
      <source>finished</source>
      <translation>已完成</translation>
    </message>
    <message>
      <source>Computer: {gpus}; driver {driver}.</source>
      <translation>电脑：{gpus}；驱动 {driver}。</translation>
    </message>
    <message>
      <source>{n} problem(s) found; they are in the report with their fixes.</source>
      <translation>发现 {n} 个问题；报告中列出了问题及其解决方法。</translation>
    </message>
    <message>
      <source>passed</source>
      <translation>通过</translation>
    </message>
    <message>
      <source>passed with warnings</source>
      <translation>通过（有警告）</translation>
    </message>
    <message>
      <source>failed</source>
      <translation>失败</translation>
    </message>
    <message>
      <source>Self-test {word}: {n} measurements.</source>
      <translation>自检{word}：共 {n} 项测量。</translation>
    </message>
    <message>
      <source>To use it, open a terminal and run: {path}\Scripts\activate</source>
      <translation>使用方法：打开终端并运行：{path}\Scripts\activate</translation>
    </message>
    <message>
      <source>To use it, open a terminal and run: source {path}/bin/activate</source>
      <translation>使用方法：打开终端并运行：source {path}/bin/activate</translation>
    </message>
    <message>
      <source>Docker setup for {fws} written to {dir}.</source>
      <translation>{fws} 的 Docker 配置已写入 {dir}。</translation>
    </message>
    <message>
      <source>The Docker setup was not fully written: {error}</source>
      <translation>Docker 配置未能完整写入：{error}</translation>
    </message>
    <message>
      <source>{fws}: restart the computer to finish, then open GPU Setup again.</source>
      <translation>{fws}：请重启电脑以完成安装，然后再次打开 GPU Setup。</translation>
    </message>
    <message>
      <source>Report saved to {path}</source>
      <translation>报告已保存到 {path}</translation>
    </message>
    <message>
      <source>Support bundle saved to {path}</source>
      <translation>支持包已保存到 {path}</translation>
    </message>
    <message>
      <source>Demonstration: {fws} would be installed into {where}; nothing was installed.</source>
      <translation>演示：{fws} 将会安装到 {where}；实际上没有安装任何东西。</translation>
    </message>
    <message>
      <source>Could not save the report: {error}</source>
      <translation>无法保存报告：{error}</translation>
    </message>
    <message>
      <source>Could not create the bundle: {error}</source>
      <translation>无法创建支持包：{error}</translation>
    </message>
    <message>
      <source>{fws} installed into {where}.</source>
      <translation>{fws} 已安装到 {where}。</translation>
    </message>
    <message>
      <source>{fws} installed into {where}, but the proof below found a problem.</source>
      <translation>{fws} 已安装到 {where}，但下面的验证发现了问题。</translation>
    </message>
    <message>
      <source>The installation was cancelled and undone.</source>
      <translation>安装已取消并已撤销。</translation>
    </message>
    <message>
      <source>{fws} installed into {where}, but not proven: the proof did not check it.</source>
      <translation>{fws} 已安装到 {where}，但未验证：验证没有检查它。</translation>
    </message>
    <message>
      <source>The installation did not finish: {error}</source>
      <translation>安装未完成：{error}</translation>
    </message>
    <message>
      <source>Check another Python environment</source>
      <translation>验证另一个 Python 环境</translation>
    </message>
    <message>
      <source>Python environments found on this computer</source>
      <translation>这台电脑上找到的 Python 环境</translation>
    </message>
    <message>
      <source>Folder or python program of the environment</source>
      <translation>环境所在的文件夹或其中的 python 程序</translation>
    </message>
    <message>
      <source>Choose a &amp;folder…</source>
      <translation>选择文件夹(&amp;F)…</translation>
    </message>
    <message>
      <source>Choose a &amp;program…</source>
      <translation>选择程序(&amp;P)…</translation>
    </message>
    <message>
      <source>Chec&amp;k</source>
      <translation>检查(&amp;K)</translation>
    </message>
    <message>
      <source>&amp;Prove it there</source>
      <translation>在该环境中验证(&amp;P)</translation>
    </message>
    <message>
      <source>Prove it there</source>
      <translation>在该环境中验证</translation>
    </message>
    <message>
      <source>Looking for Python environments on this computer…</source>
      <translation>正在查找这台电脑上的 Python 环境…</translation>
    </message>
    <message>
      <source>Press Check to see whether the proof can run there.</source>
      <translation>点击“检查”，确认能否在该环境中验证。</translation>
    </message>
    <message>
      <source>The environment's folder</source>
      <translation>环境所在的文件夹</translation>
    </message>
    <message>
      <source>The environment's python program</source>
      <translation>环境里的 python 程序</translation>
    </message>
    <message>
      <source>{where} — Python {version}: {found}</source>
      <translation>{where}（Python {version}）：{found}</translation>
    </message>
    <message>
      <source>Prove a framework in an environment you already have: pick one found on this computer, or choose its folder (or its python program).</source>
      <translation>在已有的环境中验证框架：从这台电脑上找到的环境中选择一个，或者选择环境所在的文件夹（或其中的 python 程序）。</translation>
    </message>
    <message>
      <source>No Python environment was found here; choose its folder below.</source>
      <translation>这里没有找到 Python 环境；请在下面选择它所在的文件夹。</translation>
    </message>
    <message>
      <source>One environment with a framework to check was found; pick it, or choose another below.</source>
      <translation>找到一个装有可验证框架的环境；请选择它，或在下面选择其他环境。</translation>
    </message>
    <message>
      <source>Looking for environments did not work ({error}); choose one below.</source>
      <translation>查找环境没有成功（{error}）；请在下面选择一个。</translation>
    </message>
    <message>
      <source>Checking {path}…</source>
      <translation>正在检查 {path}…</translation>
    </message>
    <message>
      <source>The check could not run: {error}</source>
      <translation>检查无法进行：{error}</translation>
    </message>
    <message>
      <source>Python was found, but no environment with a framework to check; choose one below.</source>
      <translation>找到了 Python，但没有找到装有可验证框架的环境；请在下方选择一个。</translation>
    </message>
    <message>
      <source>{n} environments with a framework to check were found; pick one, or choose another below.</source>
      <translation>找到 {n} 个装有可验证框架的环境；请选择一个，或在下面选择其他环境。</translation>
    </message>
    <message>
      <source>waiting</source>
      <translation>等待中</translation>
    </message>
    <message>
      <source>running…</source>
      <translation>运行中…</translation>
    </message>
    <message>
      <source>done</source>
      <translation>已完成</translation>
    </message>
    <message>
      <source>undone</source>
      <translation>已撤销</translation>
    </message>
    <message>
      <source>Installing</source>
      <translation>正在安装</translation>
    </message>
    <message>
      <source>You can keep using your computer meanwhile. Cancel asks whether to stop at once and undo, or to finish the current step first.</source>
      <translation>安装期间可以继续使用电脑。点击“取消”时会询问：立即停止并撤销，还是先完成当前步骤。</translation>
    </message>
    <message>
      <source>&amp;Cancel installation</source>
      <translation>取消安装(&amp;C)</translation>
    </message>
    <message>
      <source>Cancel the installation: asks whether to stop at once and undo, or after the current step</source>
      <translation>取消安装：询问是立即停止并撤销，还是在当前步骤完成后停止</translation>
    </message>
    <message>
      <source>&amp;Undo what was done</source>
      <translation>撤销已完成的步骤(&amp;U)</translation>
    </message>
    <message>
      <source>&amp;Repair</source>
      <translation>修复(&amp;R)</translation>
    </message>
    <message>
      <source>Repair: reinstall what the check found broken, then check again</source>
      <translation>修复：重新安装检查发现有问题的部分，然后再检查一次</translation>
    </message>
    <message>
      <source>&amp;Try again</source>
      <translation>重试(&amp;T)</translation>
    </message>
    <message>
      <source>C&amp;hange my choice</source>
      <translation>更改我的选择(&amp;H)</translation>
    </message>
    <message>
      <source>Go back and change the frameworks or the folder</source>
      <translation>返回并更改框架或文件夹</translation>
    </message>
    <message>
      <source>&amp;Continue by itself after the restart (GPU Setup opens when you log in)</source>
      <translation>重启后自动继续（登录后 GPU Setup 会自动打开）(&amp;C)</translation>
    </message>
    <message>
      <source>What you can change</source>
      <translation>可以修改的设置</translation>
    </message>
    <message>
      <source>Package mirror (index URL)</source>
      <translation>PyPI 镜像源（索引地址）</translation>
    </message>
    <message>
      <source>Proxy</source>
      <translation>代理</translation>
    </message>
    <message>
      <source>Package &amp;mirror:</source>
      <translation>镜像源(&amp;M)：</translation>
    </message>
    <message>
      <source>&amp;Proxy:</source>
      <translation>代理(&amp;P)：</translation>
    </message>
    <message>
      <source>Use these and &amp;try again</source>
      <translation>使用这些设置并重试(&amp;T)</translation>
    </message>
    <message>
      <source>Choose another &amp;folder</source>
      <translation>选择另一个文件夹(&amp;F)</translation>
    </message>
    <message>
      <source>Steps</source>
      <translation>步骤</translation>
    </message>
    <message>
      <source>Next steps</source>
      <translation>后续步骤</translation>
    </message>
    <message>
      <source>Installation log</source>
      <translation>安装日志</translation>
    </message>
    <message>
      <source>Show the log</source>
      <translation>显示日志</translation>
    </message>
    <message>
      <source>Making the plan again…</source>
      <translation>正在重新制定计划…</translation>
    </message>
    <message>
      <source>Starting…</source>
      <translation>正在启动…</translation>
    </message>
    <message>
      <source>Keep installing</source>
      <translation>不停止，继续安装</translation>
    </message>
    <message>
      <source>Undoing the steps that ran…</source>
      <translation>正在撤销已运行的步骤…</translation>
    </message>
    <message>
      <source>Undoing…</source>
      <translation>正在撤销…</translation>
    </message>
    <message>
      <source>Writing the Docker files…</source>
      <translation>正在写入 Docker 文件…</translation>
    </message>
    <message>
      <source>&amp;Continue installation</source>
      <translation>继续安装(&amp;C)</translation>
    </message>
    <message>
      <source>Undoing the installation</source>
      <translation>正在撤销安装</translation>
    </message>
    <message>
      <source>Free some space on that disk, or choose a folder on another disk.</source>
      <translation>请在那个磁盘上腾出一些空间，或者选择另一个磁盘上的文件夹。</translation>
    </message>
    <message>
      <source>There is no plan to install. Go back and choose again.</source>
      <translation>没有可安装的计划。请返回重新选择。</translation>
    </message>
    <message>
      <source>Repairing…</source>
      <translation>正在修复…</translation>
    </message>
    <message>
      <source>Installation cancelled before any step ran: nothing was changed.</source>
      <translation>安装在任何步骤运行之前就已取消：没有做任何改动。</translation>
    </message>
    <message>
      <source>Almost done: restart your computer now. After you log in again, GPU Setup opens by itself and continues; finished steps are not repeated.</source>
      <translation>即将完成：请立即重启电脑。重新登录后，GPU Setup 会自动打开并继续安装；已完成的步骤不会重复执行。</translation>
    </message>
    <message>
      <source>Almost done: restart your computer now. Then open GPU Setup again and press “Continue installation”; finished steps are not repeated.</source>
      <translation>即将完成：请现在重启电脑。然后再次打开 GPU Setup 并点击“继续安装”；已完成的步骤不会重复执行。</translation>
    </message>
    <message>
      <source>Quit GPU Setup?</source>
      <translation>退出 GPU Setup？</translation>
    </message>
    <message>
      <source>An installation is running. How should it stop?</source>
      <translation>安装正在进行。要怎样停止？</translation>
    </message>
    <message>
      <source>Stop now: the running step is stopped at once and GPU Setup quits; the next time you open it you can continue (that step is redone from the start) or undo.
Finish this step: the running step ends normally, nothing after it starts, then GPU Setup quits.</source>
      <translation>立即停止：正在运行的步骤马上停止，GPU Setup 随即退出；下次打开时可以继续（该步骤会从头重做）或撤销。
完成这一步：正在运行的步骤正常结束，之后的步骤不再开始，然后 GPU Setup 退出。</translation>
    </message>
    <message>
      <source>Stop now and quit</source>
      <translation>立即停止并退出</translation>
    </message>
    <message>
      <source>Finish this step, then quit</source>
      <translation>完成这一步后退出</translation>
    </message>
    <message>
      <source>Stop the installation?</source>
      <translation>停止安装？</translation>
    </message>
    <message>
      <source>How should the installation stop?</source>
      <translation>要怎样停止安装？</translation>
    </message>
    <message>
      <source>Stop now and undo: the running step is stopped at once, then every step that ran is undone; your computer is as before.
Finish this step: the running step ends normally and nothing after it starts; you can continue later or undo then.</source>
      <translation>立即停止并撤销：正在运行的步骤马上停止，然后撤销所有已运行的步骤，电脑恢复原样。
完成这一步：正在运行的步骤正常结束，之后的步骤不再开始；之后可以继续安装，也可以撤销。</translation>
    </message>
    <message>
      <source>Stop now and undo</source>
      <translation>立即停止并撤销</translation>
    </message>
    <message>
      <source>Finish this step, then stop</source>
      <translation>完成这一步后停止</translation>
    </message>
    <message>
      <source>Stopping the running step now…</source>
      <translation>正在立即停止当前步骤…</translation>
    </message>
    <message>
      <source>Installation cancelled.</source>
      <translation>安装已取消。</translation>
    </message>
    <message>
      <source>The installation did not finish.</source>
      <translation>安装未完成。</translation>
    </message>
    <message>
      <source>The Docker files are written. Run the commands below to build and start the container.</source>
      <translation>Docker 文件已写好。运行下面的命令来构建并启动容器。</translation>
    </message>
    <message>
      <source>Some setups could not be written; the reasons are below.</source>
      <translation>部分配置无法写入；原因见下方。</translation>
    </message>
    <message>
      <source>Every step was run and checked: the installed files match their records, and each framework imports.</source>
      <translation>所有步骤都已运行并检查：已安装的文件与记录一致，每个框架都能导入。</translation>
    </message>
    <message>
      <source>The package index could not be reached. Where the internet is filtered, enter a mirror of PyPI or your proxy, then try again.</source>
      <translation>无法连接到软件包索引。如果网络受限，请填写 PyPI 镜像源地址或代理服务器，然后重试。</translation>
    </message>
    <message>
      <source>Stopped. Undoing the steps that ran…</source>
      <translation>已停止。正在撤销已运行的步骤…</translation>
    </message>
    <message>
      <source>The installation finished before you answered, so nothing was stopped.</source>
      <translation>在您回答之前安装已经完成，所以没有停止任何步骤。</translation>
    </message>
    <message>
      <source>The installation is not working as it is. Repair reinstalls what is broken and checks again; or undo what was done.</source>
      <translation>目前的安装不能正常使用。“修复”会重新安装有问题的部分并再次检查；也可以撤销已做的事。</translation>
    </message>
    <message>
      <source>Finishing the running step; nothing after it will start…</source>
      <translation>正在完成当前步骤；之后的步骤不会再开始…</translation>
    </message>
    <message>
      <source>Every step that ran was undone; your computer is as before.</source>
      <translation>所有已运行的步骤都已撤销；电脑已恢复原样。</translation>
    </message>
    <message>
      <source>some setups were refused</source>
      <translation>部分配置被拒绝</translation>
    </message>
    <message>
      <source>Writing the Docker files failed: {error}</source>
      <translation>写入 Docker 文件失败：{error}</translation>
    </message>
    <message>
      <source>Python could not be downloaded. Enter a mirror of the Python builds (python-build-standalone) or your proxy, then try again.</source>
      <translation>无法下载 Python。请填写 Python 安装包（python-build-standalone）的镜像地址或代理服务器，然后重试。</translation>
    </message>
    <message>
      <source>Python &amp;mirror:</source>
      <translation>Python 镜像(&amp;M)：</translation>
    </message>
    <message>
      <source>Installing… ({n} steps)</source>
      <translation>正在安装…（共 {n} 步）</translation>
    </message>
    <message>
      <source>Installation finished and checked. Press Next to prove it works.</source>
      <translation>安装完成并已检查。点击“下一步”来验证它能正常工作。</translation>
    </message>
    <message>
      <source>You can undo what was done, try again, or read the log below.</source>
      <translation>您可以撤销已完成的步骤、重试，或查看下方日志。</translation>
    </message>
    <message>
      <source>Nothing was changed. You can try again, or read the log below.</source>
      <translation>没有做任何改动。可以重试，或查看下方日志。</translation>
    </message>
    <message>
      <source>Undoing did not fully work: {error}. The log lists what is left; a support bundle (last page) helps us help you.</source>
      <translation>撤销未能全部完成：{error}。日志中列出了未撤销的内容；请在最后一页创建支持包并发给我们，以便我们协助排查。</translation>
    </message>
    <message>
      <source>Then run:</source>
      <translation>然后运行：</translation>
    </message>
    <message>
      <source>Docker setup</source>
      <translation>Docker 配置</translation>
    </message>
    <message>
      <source>Docker setup not written</source>
      <translation>未写入 Docker 配置</translation>
    </message>
    <message>
      <source>Restart needed</source>
      <translation>需要重启</translation>
    </message>
    <message>
      <source>Could not save the resume file: {error}</source>
      <translation>无法保存用于继续安装的进度文件：{error}</translation>
    </message>
    <message>
      <source>Stopped as you asked: the steps marked done are done, nothing after them ran. You can continue the installation or undo what was done.</source>
      <translation>已按要求停止：标为完成的步骤都已完成，之后的步骤都没有运行。可以继续安装，也可以撤销已做的事。</translation>
    </message>
    <message>
      <source>Installation stopped. You can continue it (the interrupted step is redone from the start) or undo what was done.</source>
      <translation>安装已停止。可以继续安装（被中断的步骤会从头重做），也可以撤销已做的事。</translation>
    </message>
    <message>
      <source>Step {n} “{title}” failed.</source>
      <translation>第 {n} 步“{title}”失败。</translation>
    </message>
    <message>
      <source>Finishing “{step}”; nothing after it will start…</source>
      <translation>正在完成“{step}”；之后的步骤不会再开始…</translation>
    </message>
    <message>
      <source>{name}: files written to {dir}</source>
      <translation>{name}：文件已写入 {dir}</translation>
    </message>
    <message>
      <source>The generator left {n} warning(s); they are under Details.</source>
      <translation>生成时有 {n} 条警告，详见“详细信息”。</translation>
    </message>
    <message>
      <source>Commands to run next</source>
      <translation>接下来要运行的命令</translation>
    </message>
    <message>
      <source>Installed</source>
      <translation>已安装</translation>
    </message>
    <message>
      <source>cancelled</source>
      <translation>已取消</translation>
    </message>
    <message>
      <source>Installation undone</source>
      <translation>安装已撤销</translation>
    </message>
    <message>
      <source>{name}: not written. {reason}</source>
      <translation>{name}：未写入。{reason}</translation>
    </message>
    <message>
      <source>Image: {image}</source>
      <translation>镜像：{image}</translation>
    </message>
    <message>
      <source>Installation stopped</source>
      <translation>安装已停止</translation>
    </message>
    <message>
      <source>The installation did not finish</source>
      <translation>安装未完成</translation>
    </message>
    <message>
      <source>Instead: {alt}</source>
      <translation>替代方案：{alt}</translation>
    </message>
    <message>
      <source>{name}: no files were written (the reason is under Details).</source>
      <translation>{name}：没有写入任何文件（原因见“详细信息”）。</translation>
    </message>
    <message>
      <source>not working (no NVIDIA driver answered)</source>
      <translation>无法工作（NVIDIA 驱动没有响应）</translation>
    </message>
    <message>
      <source>Operating system and processor</source>
      <translation>操作系统和处理器</translation>
    </message>
    <message>
      <source>Graphics cards on the PCI bus</source>
      <translation>PCI 总线上的显卡</translation>
    </message>
    <message>
      <source>NVIDIA driver library (NVML)</source>
      <translation>NVIDIA 驱动库（NVML）</translation>
    </message>
    <message>
      <source>nvidia-smi</source>
      <translation>nvidia-smi</translation>
    </message>
    <message>
      <source>CUDA driver library</source>
      <translation>CUDA 驱动库</translation>
    </message>
    <message>
      <source>Driver versions</source>
      <translation>驱动版本</translation>
    </message>
    <message>
      <source>CUDA toolkits</source>
      <translation>CUDA 工具包</translation>
    </message>
    <message>
      <source>Python frameworks</source>
      <translation>Python 框架</translation>
    </message>
    <message>
      <source>Docker and the NVIDIA container toolkit</source>
      <translation>Docker 和 NVIDIA Container Toolkit</translation>
    </message>
    <message>
      <source>AMD ROCm</source>
      <translation>AMD ROCm</translation>
    </message>
    <message>
      <source>Kernel messages about the GPU</source>
      <translation>内核日志中与显卡有关的消息</translation>
    </message>
    <message>
      <source>Installed driver packages</source>
      <translation>已安装的驱动软件包</translation>
    </message>
    <message>
      <source>Finished</source>
      <translation>已完成</translation>
    </message>
    <message>
      <source>unknown</source>
      <translation>未知</translation>
    </message>
    <message>
      <source>Unknown graphics card</source>
      <translation>未知显卡</translation>
    </message>
    <message>
      <source>the nvidia kernel module is loaded, but its version could not be read</source>
      <translation>nvidia 内核模块已加载，但无法读取其版本</translation>
    </message>
    <message>
      <source>Maker</source>
      <translation>厂商</translation>
    </message>
    <message>
      <source>Architecture</source>
      <translation>架构</translation>
    </message>
    <message>
      <source>Compute capability</source>
      <translation>计算能力</translation>
    </message>
    <message>
      <source>Memory</source>
      <translation>显存</translation>
    </message>
    <message>
      <source>Driver</source>
      <translation>驱动</translation>
    </message>
    <message>
      <source>System</source>
      <translation>系统</translation>
    </message>
    <message>
      <source>CUDA toolkit</source>
      <translation>CUDA 工具包</translation>
    </message>
    <message>
      <source>Python</source>
      <translation>Python</translation>
    </message>
    <message>
      <source>Your machine</source>
      <translation>您的电脑</translation>
    </message>
    <message>
      <source>What we found on this computer. Nothing has been changed.</source>
      <translation>这是我们在这台电脑上发现的情况。没有做任何改动。</translation>
    </message>
    <message>
      <source>&amp;Re-scan</source>
      <translation>重新扫描(&amp;R)</translation>
    </message>
    <message>
      <source>Re-scan this computer</source>
      <translation>重新扫描这台电脑</translation>
    </message>
    <message>
      <source>Copy the re&amp;port</source>
      <translation>复制报告(&amp;P)</translation>
    </message>
    <message>
      <source>Copy the diagnose report to the clipboard</source>
      <translation>将诊断报告复制到剪贴板</translation>
    </message>
    <message>
      <source>The same text as `gpusetup diagnose`, to paste into a forum post or a support request (serial numbers and host name are masked).</source>
      <translation>与 `gpusetup diagnose` 相同的文本，可粘贴到论坛帖子或支持请求中（序列号和主机名已隐藏）。</translation>
    </message>
    <message>
      <source>Looking at your computer… this usually takes a few seconds.</source>
      <translation>正在检查您的电脑…通常只需几秒钟。</translation>
    </message>
    <message>
      <source>No graphics card was found.</source>
      <translation>没有找到显卡。</translation>
    </message>
    <message>
      <source>Software on this computer</source>
      <translation>这台电脑上的软件</translation>
    </message>
    <message>
      <source>Copied</source>
      <translation>已复制</translation>
    </message>
    <message>
      <source>Fix this for me?</source>
      <translation>要帮您修复吗？</translation>
    </message>
    <message>
      <source>Graphics card: {name}</source>
      <translation>显卡：{name}</translation>
    </message>
    <message>
      <source>Slot</source>
      <translation>插槽</translation>
    </message>
    <message>
      <source>Kernel</source>
      <translation>内核</translation>
    </message>
    <message>
      <source>Processor</source>
      <translation>处理器</translation>
    </message>
    <message>
      <source>Memory (RAM)</source>
      <translation>内存（RAM）</translation>
    </message>
    <message>
      <source>NVIDIA driver</source>
      <translation>NVIDIA 驱动</translation>
    </message>
    <message>
      <source>not installed (no NVIDIA graphics card)</source>
      <translation>未安装（没有 NVIDIA 显卡）</translation>
    </message>
    <message>
      <source>none found (not needed for PyTorch, TensorFlow or JAX wheels)</source>
      <translation>未找到（用 pip 安装的 PyTorch、TensorFlow 和 JAX 不需要它）</translation>
    </message>
    <message>
      <source>Docker</source>
      <translation>Docker</translation>
    </message>
    <message>
      <source>not installed</source>
      <translation>未安装</translation>
    </message>
    <message>
      <source>Found 1 graphics card.</source>
      <translation>找到 1 块显卡。</translation>
    </message>
    <message>
      <source>No graphics card</source>
      <translation>没有显卡</translation>
    </message>
    <message>
      <source>{version} (supports CUDA up to {cuda})</source>
      <translation>{version}（最高支持 CUDA {cuda}）</translation>
    </message>
    <message>
      <source>(inside WSL {n})</source>
      <translation>（在 WSL {n} 中）</translation>
    </message>
    <message>
      <source>Some problems need fixing; see below.</source>
      <translation>有些问题需要修复；见下方。</translation>
    </message>
    <message>
      <source>We did not find a graphics card this computer could use for deep learning. You can still install the CPU versions of the frameworks; they work, only more slowly.</source>
      <translation>我们没有找到这台电脑可用于深度学习的显卡。您仍然可以安装框架的 CPU 版本；它们可以运行，只是速度较慢。</translation>
    </message>
    <message>
      <source>What we noticed ({n})</source>
      <translation>我们发现的情况（{n}）</translation>
    </message>
    <message>
      <source>Fixing: {title}…</source>
      <translation>正在修复：{title}…</translation>
    </message>
    <message>
      <source>Done. Restart your computer, then open GPU Setup again.</source>
      <translation>完成。请重启电脑，然后再次打开 GPU Setup。</translation>
    </message>
    <message>
      <source>GPU containers set up</source>
      <translation>GPU 容器已配置</translation>
    </message>
    <message>
      <source>GPU containers not set up yet</source>
      <translation>GPU 容器尚未配置</translation>
    </message>
    <message>
      <source>Looking at your computer failed: {error}. Press Re-scan to try again; the log folder has the details.</source>
      <translation>检查电脑失败：{error}。点击“重新扫描”再试一次；详细信息在日志文件夹中。</translation>
    </message>
    <message>
      <source>Found {n} graphics cards.</source>
      <translation>找到 {n} 块显卡。</translation>
    </message>
    <message>
      <source>There are warnings worth reading below.</source>
      <translation>请留意下方的警告。</translation>
    </message>
    <message>
      <source>No problems found.</source>
      <translation>没有发现问题。</translation>
    </message>
    <message>
      <source>The checks for known problems are not available in this version.</source>
      <translation>此版本不提供已知问题的检查。</translation>
    </message>
    <message>
      <source>gpusetup will run these steps to fix “{title}”:</source>
      <translation>gpusetup 将运行以下步骤来修复“{title}”：</translation>
    </message>
    <message>
      <source>The fix did not work: {error}</source>
      <translation>修复没有成功：{error}</translation>
    </message>
    <message>
      <source>Checking: {what}</source>
      <translation>正在检查：{what}</translation>
    </message>
    <message>
      <source>The plan</source>
      <translation>安装计划</translation>
    </message>
    <message>
      <source>Read what will happen. Nothing has been changed yet: only the Install button starts it.</source>
      <translation>请阅读将要进行的操作。目前还没有做任何改动：只有点击“安装”按钮才会开始。</translation>
    </message>
    <message>
      <source>Preparing the plan…</source>
      <translation>正在准备安装计划…</translation>
    </message>
    <message>
      <source>Save the commands as a script</source>
      <translation>将命令保存为脚本</translation>
    </message>
    <message>
      <source>Shell script (*.sh);;All files (*)</source>
      <translation>Shell 脚本 (*.sh);;所有文件 (*)</translation>
    </message>
    <message>
      <source>Write the files</source>
      <translation>写入文件</translation>
    </message>
    <message>
      <source>&amp;Install</source>
      <translation>安装(&amp;I)</translation>
    </message>
    <message>
      <source>First, these steps are needed</source>
      <translation>首先需要完成以下步骤</translation>
    </message>
    <message>
      <source>What the container will have</source>
      <translation>容器中将包含的内容</translation>
    </message>
    <message>
      <source>What will be installed</source>
      <translation>将要安装的内容</translation>
    </message>
    <message>
      <source>CPU version</source>
      <translation>CPU 版本</translation>
    </message>
    <message>
      <source>The exact commands</source>
      <translation>将要运行的命令</translation>
    </message>
    <message>
      <source>Save as script…</source>
      <translation>保存为脚本…</translation>
    </message>
    <message>
      <source>This is exactly what Install will run. You can also copy it or save it and run it yourself.</source>
      <translation>这正是“安装”将要运行的内容。您也可以复制或保存它，自己运行。</translation>
    </message>
    <message>
      <source>Saved to {path}</source>
      <translation>已保存到 {path}</translation>
    </message>
    <message>
      <source>The plan could not be made: {error}</source>
      <translation>无法生成安装计划：{error}</translation>
    </message>
    <message>
      <source>GPU version, {variant}</source>
      <translation>GPU 版本，{variant}</translation>
    </message>
    <message>
      <source>Steps ({n})</source>
      <translation>步骤（{n}）</translation>
    </message>
    <message>
      <source>(asks for the administrator password)</source>
      <translation>（需要输入管理员密码）</translation>
    </message>
    <message>
      <source>Options not picked for {name} ({n})</source>
      <translation>{name} 未选用的选项（{n}）</translation>
    </message>
    <message>
      <source>Press “Write the files” to create the Docker setup. Nothing is installed on this computer.</source>
      <translation>点击“写入文件”来创建 Docker 配置。不会在这台电脑上安装任何东西。</translation>
    </message>
    <message>
      <source>Into a new virtual environment: {v}</source>
      <translation>安装到新的虚拟环境：{v}</translation>
    </message>
    <message>
      <source>Into this Python: {v}</source>
      <translation>安装到这个 Python：{v}</translation>
    </message>
    <message>
      <source>Into the conda environment: {v}</source>
      <translation>安装到 conda 环境：{v}</translation>
    </message>
    <message>
      <source>Files written to: {v}</source>
      <translation>文件写入位置：{v}</translation>
    </message>
    <message>
      <source>Download: about {down}. Space needed on the disk: about {room}.</source>
      <translation>下载大小：约 {down}。需要的磁盘空间：约 {room}。</translation>
    </message>
    <message>
      <source>Some steps are needed first (see below). Press Install when you are ready.</source>
      <translation>需要先完成一些步骤（见下方）。准备好后点击“安装”。</translation>
    </message>
    <message>
      <source>Everything is ready. Press Install when you are ready.</source>
      <translation>一切就绪。准备好后点击“安装”。</translation>
    </message>
    <message>
      <source>Could not save the script: {error}</source>
      <translation>无法保存脚本：{error}</translation>
    </message>
    <message>
      <source>{name}: nothing can be installed.</source>
      <translation>{name}：无法安装。</translation>
    </message>
    <message>
      <source>Packages: {list}</source>
      <translation>软件包：{list}</translation>
    </message>
    <message>
      <source>Not used by this build: {gpus}</source>
      <translation>此版本不会使用：{gpus}</translation>
    </message>
    <message>
      <source>Copy to the graphics card (host → device)</source>
      <translation>复制到显卡，锁页内存</translation>
    </message>
    <message>
      <source>Copy from the graphics card (device → host)</source>
      <translation>从显卡复制，锁页内存</translation>
    </message>
    <message>
      <source>Copy to the graphics card, pageable memory</source>
      <translation>复制到显卡，可分页内存</translation>
    </message>
    <message>
      <source>Copy from the graphics card, pageable memory</source>
      <translation>从显卡复制，可分页内存</translation>
    </message>
    <message>
      <source>Memory speed on the graphics card</source>
      <translation>显存速度</translation>
    </message>
    <message>
      <source>Matrix multiply, FP32 (our own kernel)</source>
      <translation>矩阵乘法，FP32（gpusetup 自带的 GPU 代码）</translation>
    </message>
    <message>
      <source>Matrix multiply gives correct results</source>
      <translation>矩阵乘法结果正确</translation>
    </message>
    <message>
      <source>Repeated runs give identical results</source>
      <translation>重复运行结果完全一致</translation>
    </message>
    <message>
      <source>Matrix multiply, FP32 (cuBLAS)</source>
      <translation>矩阵乘法，FP32（cuBLAS）</translation>
    </message>
    <message>
      <source>Matrix multiply, TF32 (cuBLAS)</source>
      <translation>矩阵乘法，TF32（cuBLAS）</translation>
    </message>
    <message>
      <source>Matrix multiply, FP16 (cuBLAS)</source>
      <translation>矩阵乘法，FP16（cuBLAS）</translation>
    </message>
    <message>
      <source>Matrix multiply, BF16 (cuBLAS)</source>
      <translation>矩阵乘法，BF16（cuBLAS）</translation>
    </message>
    <message>
      <source>Processor: matrix multiply, FP32</source>
      <translation>CPU：矩阵乘法，FP32</translation>
    </message>
    <message>
      <source>Processor: memory copy</source>
      <translation>CPU：内存复制</translation>
    </message>
    <message>
      <source>Processor: memory speed (triad)</source>
      <translation>CPU：内存速度（triad）</translation>
    </message>
    <message>
      <source>Framework check</source>
      <translation>框架检查</translation>
    </message>
    <message>
      <source>Prove it works</source>
      <translation>验证能否正常工作</translation>
    </message>
    <message>
      <source>A short test checks that each framework starts and computes correctly — on the graphics card if there is one — and how fast, against what the card is rated for.</source>
      <translation>一项简短的测试：检查每个框架能否启动并正确计算（有显卡时在显卡上），以及速度与显卡额定速度相比如何。</translation>
    </message>
    <message>
      <source>&amp;Stop the test</source>
      <translation>停止测试(&amp;S)</translation>
    </message>
    <message>
      <source>Run the test &amp;again</source>
      <translation>重新测试(&amp;A)</translation>
    </message>
    <message>
      <source>Check &amp;another Python environment…</source>
      <translation>验证另一个 Python 环境(&amp;A)…</translation>
    </message>
    <message>
      <source>No Python environment was checked for a framework.</source>
      <translation>没有在任何 Python 环境中验证框架。</translation>
    </message>
    <message>
      <source>Details: every measurement</source>
      <translation>详细信息：所有测量结果</translation>
    </message>
    <message>
      <source>Frameworks found</source>
      <translation>找到的框架</translation>
    </message>
    <message>
      <source>&amp;Repair…</source>
      <translation>修复(&amp;R)…</translation>
    </message>
    <message>
      <source>&amp;Install it…</source>
      <translation>安装(&amp;I)…</translation>
    </message>
    <message>
      <source>Details</source>
      <translation>详细信息</translation>
    </message>
    <message>
      <source>No framework was proven: {why}</source>
      <translation>没有验证任何框架：{why}</translation>
    </message>
    <message>
      <source>Pick the Python environment to prove, then press “Prove it there”.</source>
      <translation>选择要验证的 Python 环境，然后点击“在该环境中验证”。</translation>
    </message>
    <message>
      <source>The framework check runs in {python}.</source>
      <translation>框架检查在 {python} 里进行。</translation>
    </message>
    <message>
      <source>The test was stopped. Press “Run the test again” to start it again.</source>
      <translation>测试已停止。点击“重新测试”可以再次开始。</translation>
    </message>
    <message>
      <source>Your frameworks</source>
      <translation>框架</translation>
    </message>
    <message>
      <source>Graphics card versus processor</source>
      <translation>显卡与 CPU 对比</translation>
    </message>
    <message>
      <source>Notes</source>
      <translation>说明</translation>
    </message>
    <message>
      <source>Graphics card</source>
      <translation>显卡</translation>
    </message>
    <message>
      <source>No framework was checked: there is no installed environment to check. Press “Check another Python environment…” to pick one.</source>
      <translation>没有验证框架：没有可以验证的已安装环境。请点击“检验另一个 Python 环境…”选择一个。</translation>
    </message>
    <message>
      <source>{name}: matrix multiply on the graphics card</source>
      <translation>{name}：在显卡上做矩阵乘法</translation>
    </message>
    <message>
      <source>{name}: matrix multiply and convolution</source>
      <translation>{name}：矩阵乘法和卷积</translation>
    </message>
    <message>
      <source>The test could not run: {error}</source>
      <translation>测试无法运行：{error}</translation>
    </message>
    <message>
      <source>A recording: these numbers were measured on the real {what}, not on this computer.</source>
      <translation>这是录制的结果：以下数值是在真实的 {what} 上测得的，并非这台电脑。</translation>
    </message>
    <message>
      <source>It works.</source>
      <translation>运行正常。</translation>
    </message>
    <message>
      <source>Not everything works: see below.</source>
      <translation>并非一切正常，请看下面。</translation>
    </message>
    <message>
      <source>The graphics card could not be tested; the results below show what was measured.</source>
      <translation>无法测试显卡；下方显示的是已测得的结果。</translation>
    </message>
    <message>
      <source>The graphics card multiplied matrices {x}× faster than the processor.</source>
      <translation>显卡的矩阵乘法速度是 CPU 的 {x} 倍。</translation>
    </message>
    <message>
      <source>{name} {version} sees {n} graphics card(s).</source>
      <translation>{name} {version} 识别到 {n} 块显卡。</translation>
    </message>
    <message>
      <source>{name} {version} is installed but does not see the graphics card.</source>
      <translation>{name} {version} 已安装，但没有识别到显卡。</translation>
    </message>
    <message>
      <source>Welcome to GPU Setup</source>
      <translation>欢迎使用 GPU Setup</translation>
    </message>
    <message>
      <source>From “I have a computer with a graphics card” to “my deep-learning framework runs on it, and here is the proof”.</source>
      <translation>从“我有一台带显卡的电脑”，到“我的深度学习框架已经在显卡上运行，而且有测试结果为证”。</translation>
    </message>
    <message>
      <source>What will happen</source>
      <translation>接下来会发生什么</translation>
    </message>
    <message>
      <source>Nothing changes without your consent</source>
      <translation>未经您同意，不会做任何改动</translation>
    </message>
    <message>
      <source>Open log folder</source>
      <translation>打开日志文件夹</translation>
    </message>
    <message>
      <source>Language and appearance</source>
      <translation>语言和外观</translation>
    </message>
    <message>
      <source>Language</source>
      <translation>语言</translation>
    </message>
    <message>
      <source>&amp;Language:</source>
      <translation>语言(&amp;L)：</translation>
    </message>
    <message>
      <source>Appearance</source>
      <translation>外观</translation>
    </message>
    <message>
      <source>&amp;Appearance:</source>
      <translation>外观(&amp;A)：</translation>
    </message>
    <message>
      <source>Continue the interrupted installation</source>
      <translation>继续被中断的安装</translation>
    </message>
    <message>
      <source>Continue installation</source>
      <translation>继续安装</translation>
    </message>
    <message>
      <source>Undo it and start over</source>
      <translation>撤销并重新开始</translation>
    </message>
    <message>
      <source>Undo the interrupted installation and start over</source>
      <translation>撤销被中断的安装并重新开始</translation>
    </message>
    <message>
      <source>Undoing the steps that were done…</source>
      <translation>正在撤销已完成的步骤…</translation>
    </message>
    <message>
      <source>We look at your computer: graphics cards, driver, CUDA and Python.</source>
      <translation>检查电脑：显卡、驱动程序、CUDA 和 Python。</translation>
    </message>
    <message>
      <source>You choose what you want to run: PyTorch, TensorFlow or JAX, and where.</source>
      <translation>选择要运行的框架（PyTorch、TensorFlow 或 JAX）以及安装位置。</translation>
    </message>
    <message>
      <source>We show you the plan: what will be installed, why, and the exact commands.</source>
      <translation>展示安装计划：要安装什么、为什么安装，以及将要运行的具体命令。</translation>
    </message>
    <message>
      <source>Only when you press Install do we change anything. You can cancel; finished steps are undone.</source>
      <translation>只有点击“安装”后才会做出改动，并且可以随时取消；已完成的步骤会被撤销。</translation>
    </message>
    <message>
      <source>We test the graphics card and show you the measured speed as proof.</source>
      <translation>测试显卡，并展示测得的速度作为验证结果。</translation>
    </message>
    <message>
      <source>Looking at your computer only reads information. Every change is listed on the plan page first, and a record of everything we run is kept in the log folder:</source>
      <translation>检查电脑只会读取信息。每一项改动都会先列在计划页上，我们运行的所有内容都会记录在日志文件夹中：</translation>
    </message>
    <message>
      <source>Follow the system</source>
      <translation>跟随系统</translation>
    </message>
    <message>
      <source>Light</source>
      <translation>浅色</translation>
    </message>
    <message>
      <source>Dark</source>
      <translation>深色</translation>
    </message>
    <message>
      <source>An installation into {target} stopped before it finished (for example for a restart). {n} steps are in its plan; steps already done are skipped.</source>
      <translation>安装到 {target} 的过程在完成前停止了（例如因为重启）。计划共有 {n} 步；已完成的步骤会被跳过。</translation>
    </message>
    <message>
      <source>Copy to clipboard</source>
      <translation>复制到剪贴板</translation>
    </message>
    <message>
      <source>Problem</source>
      <translation>问题</translation>
    </message>
    <message>
      <source>Warning</source>
      <translation>警告</translation>
    </message>
    <message>
      <source>Note</source>
      <translation>提示</translation>
    </message>
    <message>
      <source>OK</source>
      <translation>正常</translation>
    </message>
    <message>
      <source>Progress</source>
      <translation>进度</translation>
    </message>
    <message>
      <source>Details (in English)</source>
      <translation>详细信息（英文）</translation>
    </message>
    <message>
      <source>Log folder</source>
      <translation>日志文件夹</translation>
    </message>
    <message>
      <source>Folder path</source>
      <translation>文件夹路径</translation>
    </message>
    <message>
      <source>&amp;Copy</source>
      <translation>复制(&amp;C)</translation>
    </message>
    <message>
      <source>Close</source>
      <translation>关闭</translation>
    </message>
    <message>
      <source>Copy</source>
      <translation>复制</translation>
    </message>
    <message>
      <source>Commands</source>
      <translation>命令</translation>
    </message>
    <message>
      <source>How to fix it:</source>
      <translation>解决方法：</translation>
    </message>
    <message>
      <source>English details (with this computer's values)</source>
      <translation>详细信息（英文，含本机的具体数值）</translation>
    </message>
    <message>
      <source>Do it for me…</source>
      <translation>自动修复…</translation>
    </message>
    <message>
      <source>✔ Pass</source>
      <translation>✔ 通过</translation>
    </message>
    <message>
      <source>⚠ Slower than expected</source>
      <translation>⚠ 比预期慢</translation>
    </message>
    <message>
      <source>✖ Failed</source>
      <translation>✖ 失败</translation>
    </message>
    <message>
      <source>– Skipped</source>
      <translation>– 已跳过</translation>
    </message>
    <message>
      <source>ℹ Measured</source>
      <translation>ℹ 已测量</translation>
    </message>
    <message>
      <source>not measured</source>
      <translation>未测量</translation>
    </message>
    <message>
      <source>No file manager could open the folder. It is here:</source>
      <translation>无法用文件管理器打开这个文件夹。文件夹位置：</translation>
    </message>
    <message>
      <source>What this means:</source>
      <translation>这意味着：</translation>
    </message>
    <message>
      <source>How to fix it (in English, with the exact commands)</source>
      <translation>解决方法（英文原文，含具体命令）</translation>
    </message>
    <message>
      <source>{value} {unit} of {rated} {unit} rated peak ({pct}%)</source>
      <translation>{value} {unit}，额定峰值 {rated} {unit}（{pct}%）</translation>
    </message>
    <message>
      <source>Fix automatically: {title}</source>
      <translation>自动修复：{title}</translation>
    </message>
    <message>
      <source>{value} {unit} (no rated peak known for this device)</source>
      <translation>{value} {unit}（此设备的额定峰值未知）</translation>
    </message>
    <message>
      <source>How to fix: {title}</source>
      <translation>解决方法：{title}</translation>
    </message>
    <message>
      <source>Changes to this computer are being made. If you quit now, the running step is stopped at once; the next time you open GPU Setup you can continue or undo. Quit?</source>
      <translation>正在修改这台电脑。如果现在退出，正在运行的步骤会马上停止；下次打开 GPU Setup 时可以继续或撤销。要退出吗？</translation>
    </message>
    <message>
      <source>&amp;Next &gt;</source>
      <translation>下一步(&amp;N) &gt;</translation>
    </message>
    <message>
      <source>&lt; &amp;Back</source>
      <translation>&lt; 上一步(&amp;B)</translation>
    </message>
    <message>
      <source>Cancel</source>
      <translation>取消</translation>
    </message>
    <message>
      <source>&amp;Finish</source>
      <translation>完成(&amp;F)</translation>
    </message>
    <message>
      <source>GPU Setup</source>
      <translation>GPU Setup</translation>
    </message>
    <message>
      <source>demonstration, nothing is changed</source>
      <translation>演示模式，不会做任何改动</translation>
    </message>
  </context>
</TS>

import {
  FRAME_SEPARATOR,
  NO_MESSAGE,
  failureKey,
  firstOwnFrame,
  normaliseMessage,
} from './failure-signature.js';

/**
 * Messages and traces of failing tests from the report corpus (../shared/fixtures/reports: real reports of public
 * projects, each named by its file), cut to their first lines, with the signature key each gets.
 */
const CORPUS: [file: string, message: string, trace: string, key: string][] = [
  ['junit/allure2__TEST-test.RetryTest.xml', 'message-root', 'trace-root', 'message-root'],
  [
    'junit/dorny-test-reporter__TEST-org.apache.pulsar.AddMissingPatchVersionTest.xml',
    'expected [1.2.1] but found [1.2.0]',
    '\n      java.lang.AssertionError: expected [1.2.1] but found [1.2.0]\nat org.testng.Assert.fail(Assert.java:99)\nat org.testng.Assert.failNotEquals(Assert.java:1037)\nat org.testng.Assert.assertEqualsImpl(Assert.java:140)\nat org.testng.Assert.assertEquals(Assert.java:122)\nat org.testng.Assert.assertEquals(Assert.java:629)\nat org.testng.Assert.assertEquals(Assert.java:639)\nat org.apache.pulsar.AddMissingPatchVersionTest.testVersionStrings(AddMissingPatchVersionTest.java:29)\nat sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\nat sun.reflect.NativeMethodAccessorImpl.invoke(NativeMethodAccessorImpl.java:62)\nat sun.reflect.DelegatingMethodAccessorImpl.invoke(DelegatingMethodAccessorImpl.java:43)',
    'expected [<n>] but found [<n>] @ org.apache.pulsar.AddMissingPatchVersionTest.testVersionStrings(AddMissingPatchVersionTest.java)',
  ],
  [
    'junit/dorny-test-reporter__phpcheckstyle-phpunit.xml',
    '',
    'OtherTest::testOther\nWe expect 20 warnings\nFailed asserting that 19 matches expected 20.\n\n/workspace/phpcheckstyle/test/OtherTest.php:24',
    'OtherTest::testOther',
  ],
  [
    'junit/dorny-test-reporter__phpcheckstyle-phpunit.xml',
    '',
    'OtherTest::testException\nWe expect 1 error\nFailed asserting that 0 matches expected 1.\n\n/workspace/phpcheckstyle/test/OtherTest.php:40',
    'OtherTest::testException',
  ],
  [
    'junit/dorny-test-reporter__python-xunit-unittest.xml',
    'failed',
    'Traceback (most recent call last):\n  File "/Users/foo/Projects/python-test/tests/test_lib.py", line 24, in test_always_fail\n    self.fail("failed")\nAssertionError: failed\n',
    'failed @ test_lib.py in test_always_fail',
  ],
  [
    'junit/dorny-test-reporter__python-xunit-unittest.xml',
    'error',
    'Traceback (most recent call last):\n  File "/Users/foo/Projects/python-test/tests/test_lib.py", line 31, in test_error\n    raise Exception("error")\nException: error\n',
    'error @ test_lib.py in test_error',
  ],
  [
    'junit/dorny-test-reporter__test-errors-jest-test-results.xml',
    '',
    '  ● Test suite failed to run\n\n    tsconfig.json:13:3 - error TS6258: \'typeRoots\' should be set inside the \'compilerOptions\' object of the config json file\n\n    13   "typeRoots": ["./src/lib/types", "./node_modules/@types"],\n         ~~~~~~~~~~~\n',
    '● Test suite failed to run',
  ],
  [
    'junit/enricomi-publish-unit-test-result-action__junit.multiresult.xml',
    'test failure',
    'Assertion failed',
    'test failure',
  ],
  [
    'junit/enricomi-publish-unit-test-result-action__junit.multiresult.xml',
    'test teardown failure',
    'stdout',
    'test teardown failure',
  ],
  [
    'junit/enricomi-publish-unit-test-result-action__suite-logs.xml',
    'exited with error code 1',
    '',
    'exited with error code <n>',
  ],
  [
    'junit/jenkins-junit-plugin__junit-report-20090516.xml',
    '',
    'java.lang.NullPointerException\r\n       at org.twia.vendor.VendorManagerTest.testGetVendorFirmKeyForVendorRep(VendorManagerTest.java:104)\r\n       at sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\r\n       at sun.reflect.NativeMethodAccessorImpl.invoke(NativeMethodAccessorImpl.java:39)\r\n       at sun.reflect.DelegatingMethodAccessorImpl.invoke(DelegatingMethodAccessorImpl.java:25)\r\n       at java.lang.reflect.Method.invoke(Method.java:585)\r\n       at junit.framework.TestCase.runTest(TestCase.java:166)\r\n       at org.unitils.UnitilsJUnit3.runTest(UnitilsJUnit3.java:171)\r\n       at junit.framework.TestCase.runBare(TestCase.java:140)\r\n       at org.unitils.UnitilsJUnit3.runBare(UnitilsJUnit3.java:138)\r\n       at junit.framework.TestResult$1.protect(TestResult.java:106)\r\n       at junit.framework.TestResult.runProtected(TestResult.java:124)\r',
    'java.lang.NullPointerException @ org.twia.vendor.VendorManagerTest.testGetVendorFirmKeyForVendorRep(VendorManagerTest.java)',
  ],
  [
    'junit/jenkins-junit-plugin__junit-report-20090516.xml',
    'RuntimeException; nested exception is: \n\tjava.lang.IllegalArgumentException: id to load is required for loading',
    'java.rmi.ServerException: RuntimeException; nested exception is:\n       java.lang.IllegalArgumentException: id to load is required for loading\r\n       at org.jboss.ejb.plugins.LogInterceptor.handleException(LogInterceptor.java:421)\r\n       at org.jboss.ejb.plugins.LogInterceptor.invoke(LogInterceptor.java:209)\r\n       at org.jboss.ejb.plugins.ProxyFactoryFinderInterceptor.invoke(ProxyFactoryFinderInterceptor.java:138)\r\n       at org.jboss.ejb.SessionContainer.internalInvoke(SessionContainer.java:648)\r\n       at org.jboss.ejb.Container.invoke(Container.java:960)\r\n       at sun.reflect.GeneratedMethodAccessor289.invoke(Unknown Source)\r\n       at sun.reflect.DelegatingMethodAccessorImpl.invoke(DelegatingMethodAccessorImpl.java:25)\r\n       at java.lang.reflect.Method.invoke(Method.java:585)\r\n       at org.jboss.mx.interceptor.ReflectedDispatcher.invoke(ReflectedDispatcher.java:155)\r\n       a',
    'RuntimeException; nested exception is: java.lang.IllegalArgumentException: id to load is required for loading @ org.jboss.ejb.plugins.LogInterceptor.handleException(LogInterceptor.java)',
  ],
  [
    'junit/jenkins-junit-plugin__junit-report-6700.xml',
    'gda/device/detector/DAServer',
    'java.lang.NoClassDefFoundError: gda/device/detector/DAServer\n    at java.lang.Class.forName0(Native Method)\n    at java.lang.Class.forName(Class.java:169)\nCaused by: java.lang.ClassNotFoundException: gda.device.detector.DAServer\n    at java.net.URLClassLoader$1.run(URLClassLoader.java:202)\n    at java.security.AccessController.doPrivileged(Native Method)\n    at java.net.URLClassLoader.findClass(URLClassLoader.java:190)\n    at java.lang.ClassLoader.loadClass(ClassLoader.java:307)\n    at sun.misc.Launcher$AppClassLoader.loadClass(Launcher.java:301)\n    at java.lang.ClassLoader.loadClass(ClassLoader.java:248)\n',
    'gda/device/detector/DAServer',
  ],
  [
    'junit/jenkins-junit-plugin__junit-report-nested-testsuites.xml',
    'bla bla',
    'java.lang.IllegalStateException: bla bla\n            at test.Test(Test:35)\n        ',
    'bla bla @ test.Test(…)',
  ],
  [
    'junit/jenkins-xunit-plugin__junit-testcase3-input.xml',
    '',
    "\n                    FiltersTest::testFilterByNull with data set #1 ('publish_date', 1)\n                    PHPUnit_Extensions_Selenium2TestCase_WebDriverException: Unable to find element with xpath ==\n                    //label[contains(@class, \"x-toolbar-item\")][starts-with(., \"1 of\")] (WARNING: The server did not\n                    provide any stacktrace information) Command duration or timeout: 20.36 seconds For\n                    documentation on\n                    this error, please visit: http://seleniumhq.org/exceptions/no_such_element.html Build info: version:\n                    '2.33.0', revision: '4e90c97', time: '2013-05-22 15:32:38'\n                    System info: os.name: 'Windows 7',\n                    os.arch: 'amd64', os.version: '6.1', java.version: '1.7.0_11' Session ID:\n                    17481983-5933-4d37-ba07-17096efdc573 Driver info:\n                    or",
    "FiltersTest::testFilterByNull with data set #<n> ('publish_date', <n>)",
  ],
  [
    'junit/jenkins-xunit-plugin__junit-testcase5-input.xml',
    'expected:<2> but was:<3>',
    'junit.framework.AssertionFailedError: expected:<2> but was:<3>\n\tat junit.framework.Assert.fail(Assert.java:57)\n\tat junit.framework.Assert.failNotEquals(Assert.java:329)\n\tat junit.framework.Assert.assertEquals(Assert.java:78)\n\tat junit.framework.Assert.assertEquals(Assert.java:234)\n\tat junit.framework.Assert.assertEquals(Assert.java:241)\n\tat junit.framework.TestCase.assertEquals(TestCase.java:409)\n\tat com.acme.slt.user.core.test.internal.persistence.UserEventRepositoryTest.testIfReturnsAllEventsExistingForUserByDefault(UserEventRepositoryTest.java:66)\n\tat sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\n\tat sun.reflect.NativeMethodAccessorImpl.invoke(NativeMethodAccessorImpl.java:62)\n\tat sun.reflect.DelegatingMethodAccessorImpl.invoke(DelegatingMethodAccessorImpl.java:43)\n\tat java.lang.reflect.Method.invoke(Method.java:497)',
    'expected:<<n>> but was:<<n>> @ com.acme.slt.user.core.test.internal.persistence.UserEventRepositoryTest.testIfReturnsAllEventsExistingForUserByDefault(UserEventRepositoryTest.java)',
  ],
  [
    'junit/jenkins-xunit-plugin__phpunit-testcase11-input.xml',
    '',
    'signupBaseCest: Base test instance creation\nFacebook\\WebDriver\\Exception\\UnknownServerException: unknown error: unhandled inspector error: {"code":-32000,"message":"Cannot navigate to invalid URL"}\n  (Session info: chrome=68.0.3440.84)\n  (Driver info: chromedriver=2.41.578700 (2f1ed5f9343c13f73144538f15c00b370eda6706),platform=Linux 4.14.91+ x86_64)\n\n/var/www/insly/vendor/facebook/webdriver/lib/Exception/WebDriverException.php:114\n/var/www/insly/vendor/facebook/webdriver/lib/Remote/HttpCommandExecutor.php:326\n/var/www/insly/vendor/facebook/webdriver/lib/Remote/RemoteWebDriver.php:547\n/var/www/insly/vendor/facebook/webdriver/lib/Remote/RemoteWebDriver.php:226\n/var/www/insly/vendor/codeception/codeception/src/Codeception/Module/WebDriver.php:891\n/var/www/insly/vendor/codeception/codeception/src/Codeception/Step.php:265\n/var/www/insly/vendor/codeception/codeception/src/Codeception/Scenario.',
    'signupBaseCest: Base test instance creation',
  ],
  [
    'junit/jstemmer-go-junit-report__001-report.xml',
    'Failed',
    '    fail_test.go:6: Error message\n    fail_test.go:7: Longer\n        error\n        message.',
    'Failed @ fail_test.go',
  ],
  ['junit/jstemmer-go-junit-report__012-report.xml', 'Failed', '', 'Failed'],
  [
    'junit/jstemmer-go-junit-report__012-report.xml',
    'Failed',
    '    subtests_test.go:10: error message',
    'Failed @ subtests_test.go',
  ],
  [
    'junit/jstemmer-go-junit-report__014-report.xml',
    'Runtime error',
    'panic: init\nstacktrace',
    'Runtime error',
  ],
  [
    'junit/jstemmer-go-junit-report__102-report.xml',
    'Build error',
    './main.go:4:6: unused declared but not used\n./main.go:5:2: undefined: fmt\n./main.go:5:48: undefined: value',
    'Build error',
  ],
  [
    'junit/mikepenz-action-junit-report__TEST-action.surefire.report.calc.StringUtilsTest.xml',
    '',
    'java.lang.AssertionError\n\tat action.surefire.report.calc.StringUtilsTest.require(StringUtilsTest.java:20)\n',
    'java.lang.AssertionError @ action.surefire.report.calc.StringUtilsTest.require(StringUtilsTest.java)',
  ],
  ['junit/mikepenz-action-junit-report__nested-junit.xml', 'failure', '', 'failure'],
  [
    'junit/mikepenz-action-junit-report__nextest-basic.xml',
    '',
    "thread 'test_failure' panicked at tests/parry3d.rs:154:5:\n                assertion `left == right` failed: 0 must equal 1\n                left: 0\n                right: 1\n                note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
    "thread 'test_failure' panicked at tests/parry3d.rs:<n>:<n>:",
  ],
  [
    'junit/projektor__k6-junit.xml',
    '  ✗ errors.....................: 50.00% ✓ 10  ✗ 10 ',
    '  ✗ errors.....................: 50.00% ✓ 10  ✗ 10 ',
    '✗ errors.....................: <n>% ✓ <n> ✗ <n>',
  ],
  [
    'junit/trr-parser__junit.testlogger.xml',
    'TearDown : System.InvalidOperationException : Operation is not valid due to the current state of the object.',
    '--TearDown\n   at JUnit.Xml.TestLogger.NetFull.Tests.FailingTearDown.TearDown() in C:\\Users\\REDACTED\\Documents\\GitHub\\junit.testlogger\\test\\assets\\JUnit.Xml.TestLogger.NetCore.Tests\\UnitTest1.cs:line 182',
    'TearDown : System.InvalidOperationException : Operation is not valid due to the current state of the object. @ JUnit.Xml.TestLogger.NetFull.Tests.FailingTearDown.TearDown() (UnitTest1.cs)',
  ],
  [
    'junit/trr-parser__newman-failures.xml',
    "expected to include 'Residntial'",
    '\n      ',
    "expected to include 'Residntial'",
  ],
  [
    'junit/trr-parser__wdio-failures-errors.xml',
    'Error: element ("//button/span[text()=\'Continue\']") still displayed after 20000ms',
    '',
    'Error: element ("//button/span[text()=\'Continue\']") still displayed after <n>ms',
  ],
  [
    'junit/trr-parser__wdio-failures-errors.xml',
    'Error: expect(received).toBeGreaterThanOrEqual(expected)',
    '',
    'Error: expect(received).toBeGreaterThanOrEqual(expected)',
  ],
  [
    'nunit3/jenkins-nunit-plugin__NUnit-issue110.xml',
    '  A failure message for the failed test.\nAssert.That(false, Is.EqualTo(true))\n  Expected: True\n  But was:  False\n',
    '   at Money.MoneyTest.FailedTest() in C:\\Users\\USER\\OpenSourceProjects\\nunit-csharp-samples\\money\\MoneyTest.cs:line 336\n\n1)    at Money.MoneyTest.FailedTest() in C:\\Users\\user\\OpenSourceProjects\\nunit-csharp-samples\\money\\MoneyTest.cs:line 336\n\n',
    'A failure message for the failed test. Assert.That(false, Is.EqualTo(true)) Expected: True But was: False @ Money.MoneyTest.FailedTest() (MoneyTest.cs)',
  ],
  [
    'nunit3/jenkins-nunit-plugin__NUnit-issue50162.xml',
    'One or more child tests had errors',
    '\n      ',
    'One or more child tests had errors',
  ],
  [
    'nunit3/jenkins-nunit-plugin__NUnit-issue50162.xml',
    'Oh no the test failed!',
    '   bei UnitTests.HelloWorldTests.FailThisTest() in C:\\Program Files (x86)\\Jenkins\\workspace\\Build-VS-project\\HelloWorld\\UnitTests\\HelloWorldTests.cs:Zeile 18.\n',
    'Oh no the test failed!',
  ],
  [
    'nunit3/jenkins-nunit-plugin__NUnit-issue50162.xml',
    '  Expected: greater than 2\n  But was:  1\n',
    '   bei UnitTests.HelloWorldTests.TestWithParameters(String param) in C:\\Program Files (x86)\\Jenkins\\workspace\\Build-VS-project\\HelloWorld\\UnitTests\\HelloWorldTests.cs:Zeile 27.\n',
    'Expected: greater than <n> But was: <n>',
  ],
  [
    'nunit3/jenkins-xunit-plugin__nunit3-testcase4-input.xml',
    'This is an Assembly Level Error message.',
    '   at Demo.Core.Tests.Garbage.LiteralNonsense() in C:\\Projects\\workspace\\UPG-Build-Pipeline\\Source\\Demo.Core\\Tests\\Garbage.Test.cs:line 25\n',
    'This is an Assembly Level Error message. @ Demo.Core.Tests.Garbage.LiteralNonsense() (Garbage.Test.cs)',
  ],
  [
    'nunit3/jenkins-xunit-plugin__nunit3-testcase4-input.xml',
    'This is an intentional failure.',
    '   at Demo.Core.Tests.Lambchop.ShouldDie() in C:\\Projects\\workspace\\UPG-Build-Pipeline\\Source\\Demo.Core\\Tests\\Lambchop.Test.cs:line 47\n',
    'This is an intentional failure. @ Demo.Core.Tests.Lambchop.ShouldDie() (Lambchop.Test.cs)',
  ],
  [
    'nunit3/jenkins-xunit-plugin__nunit3-testcase5-input.xml',
    "Unhandled log message: '[Error] [LMC] Position is 45, and 1 byte was requested, but length is 45.'. Use UnityEngine.TestTools.LogAssert.Expect",
    'SimpleFudbal.MasterClasses.Lambda.MasterClient:LogError(String) (at Assets/Scripts/Network/Lambda/MasterClient.cs:2068)\nSimpleFudbal.MasterClasses.Lambda.MasterClient:ParseLoginData(JToken) (at Assets/Scripts/Network/Lambda/MasterClient.cs:858)\nSimpleFudbal.MasterClasses.Lambda.Requests.LogInWithUsername:HandleResponse(MasterClient, ServerStatusCode, String, String, JToken, JToken, DateTime, Int32) (at Assets/Scripts/Network/Lambda/MasterRequests/LogInWithUsername.cs:43)\nSimpleFudbal.MasterClasses.Lambda.LambdaRequest:PutResponse(MasterClient, ServerRequest, ServerResponse) (at Assets/Scripts/Network/Lambda/LambdaRequest.cs:128)\nSimpleFudbal.MasterClasses.Lambda.LambdaRequestManager:responseHandler(ServerRequest, ServerResponse) (at Assets/Scripts/Network/Lambda/LambdaRequestManager.cs:173)\nSimpleFudbal.BaseClasses.NetWrapper:updateUnityRequest(ServerRequest) (at Assets/Scripts/Network/N',
    "Unhandled log message: '[Error] [LMC] Position is <n>, and <n> byte was requested, but length is <n>.'. Use UnityEngine.TestTools.LogAssert.Expect",
  ],
  [
    'nunit3/jenkins-xunit-plugin__nunit3-testcase5-input.xml',
    "Unhandled log message: '[Exception] NullReferenceException: Object reference not set to an instance of an object'. Use UnityEngine.TestTools.LogAssert.Expect",
    'PlayPanel.SetupArenas () (at Assets/Scripts/FrontEnd/PlayPanel.cs:151)\nPlayPanel.Initialize (System.Boolean initialLogin) (at Assets/Scripts/FrontEnd/PlayPanel.cs:142)\nManagedPanel.Load (System.Boolean initialLogin) (at Assets/Scripts/UI-Generic/ManagedPanel.cs:51)\nUIManager.ShowNextPanel (System.Boolean instant) (at Assets/Scripts/UI-Generic/UIManager.cs:2276)\nUIManager.SwitchTo (ManagedPanel nextPanel, System.Collections.Generic.Dictionary`2[TKey,TValue] data, System.Boolean force, System.Boolean simultaneous, ManagedPanel+SwitchType switchType) (at Assets/Scripts/UI-Generic/UIManager.cs:2151)\nUIManager.SwitchTo (System.String panelName, System.Collections.Generic.Dictionary`2[TKey,TValue] data, System.Boolean force, System.Boolean simultaneous, ManagedPanel+SwitchType switchType) (at Assets/Scripts/UI-Generic/UIManager.cs:2096)\nUIManager.SwitchToPanel (System.String panelName, System.',
    "Unhandled log message: '[Exception] NullReferenceException: Object reference not set to an instance of an object'. Use UnityEngine.TestTools.LogAssert.Expect",
  ],
  [
    'testng/jenkins-testng-plugin__testng-dp-result.xml',
    '',
    '\n              java.lang.AssertionError\n\tat org.jenkins.TestDataProvider.test(TestDataProvider.java:15)\n\tat sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\n\tat sun.reflect.NativeMethodAccessorImpl.invoke(NativeMethodAccessorImpl.java:39)\n\tat sun.reflect.DelegatingMethodAccessorImpl.invoke(DelegatingMethodAccessorImpl.java:25)\n\tat java.lang.reflect.Method.invoke(Method.java:597)\n\tat org.testng.internal.MethodInvocationHelper.invokeMethod(MethodInvocationHelper.java:74)\n\tat org.testng.internal.Invoker.invokeMethod(Invoker.java:673)\n\tat org.testng.internal.Invoker.invokeTestMethod(Invoker.java:846)\n\tat org.testng.internal.Invoker.invokeTestMethods(Invoker.java:1170)\n\tat org.testng.internal.TestMethodWorker.invokeTestMethods(TestMethodWorker.java:125)',
    'java.lang.AssertionError @ org.jenkins.TestDataProvider.test(TestDataProvider.java)',
  ],
  [
    'testng/jenkins-testng-plugin__testng-reporter-log-result.xml',
    '',
    '\n              java.lang.AssertionError\n    at org.farshid.TestDataProvider.test(TestDataProvider.java:15)\n    at sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\n    at sun.reflect.NativeMethodAccessorImpl.invoke(NativeMethodAccessorImpl.java:39)\n    at sun.reflect.DelegatingMethodAccessorImpl.invoke(DelegatingMethodAccessorImpl.java:25)\n    at java.lang.reflect.Method.invoke(Method.java:597)\n    at org.testng.internal.MethodInvocationHelper.invokeMethod(MethodInvocationHelper.java:74)\n    at org.testng.internal.Invoker.invokeMethod(Invoker.java:673)\n    at org.testng.internal.Invoker.invokeTestMethod(Invoker.java:846)\n    at org.testng.internal.Invoker.invokeTestMethods(Invoker.java:1170)\n    at org.testng.internal.TestMethodWorker.invokeTestMethods(TestMethodWorker.java:125)',
    'java.lang.AssertionError @ org.farshid.TestDataProvider.test(TestDataProvider.java)',
  ],
  [
    'testng/trr-parser__multiple-suites-retries.xml',
    '\n\t\t\t\t\t\t\tfailed\n\t\t\t\t\t\t',
    '\n\t\t\t\t\t\t\t\n\t\t\t\t\t\t',
    'failed',
  ],
  [
    'testng/trr-parser__single-suite-multiple-tests.xml',
    '\n\t\t\t\t\t\t\texpected [A] but found [948474]\n\t\t\t\t\t\t',
    '\n\t\t\t\t\t\t\tjava.lang.AssertionError: n(RemoteTestNGStarter.java:109)\n\t\t\t\t\t\t',
    'expected [A] but found [<n>]',
  ],
  [
    'testng/trr-parser__single-suite-multiple-tests.xml',
    '\n\t\t\t\t\t\t\tExpected condition failed: : &lt;95ddbda01ea4b3dbcb049e681a6&gt;\n\t\t\t\t\t\t',
    '\n\t\t\t\t\t\t\torg.openqa.seleniumn(RemoteTestNGStarter.java:109)\n\t\t\t\t\t\t',
    'Expected condition failed: : &lt;<id>&gt;',
  ],
  [
    'testng/trr-parser__single-suite-multiple-tests.xml',
    '\n\t\t\t\t\t\t\telement click intercepted:\n\t\t\t\t\t\t',
    '\n\t\t\t\t\t\t\torg.openqa.selenium.n(RemoteTestNGStarter.java:109)\n\t\t\t\t\t\t',
    'element click intercepted:',
  ],
  [
    'testng/trr-parser__single-suite-multiple-tests.xml',
    "\n\t\t\t\t\t\t\tAppium error: An unknown sr='Search...']}\n\t\t\t\t\t\t",
    '\n\t\t\t\t\t\t\torg.openqa.seleniumn(RemoteTestNGStarter.java:109)\n\t\t\t\t\t\t',
    "Appium error: An unknown sr='Search...']}",
  ],
  [
    'testng/trr-parser__single-suite-multiple-tests.xml',
    '\n\t\t\t\t\t\t\tA script did not complete \n\t\t\t\t\t\t',
    '\n\t\t\t\t\t\t\torg.openqa.seleniumn(RemoteTestNGStarter.java:109)\n\t\t\t\t\t\t',
    'A script did not complete',
  ],
  [
    'testng/trr-parser__single-suite.xml',
    '\n              expected [true] but found [false]\n            ',
    '\n              expected [true] but found [false]\n            ',
    'expected [true] but found [false]',
  ],
  [
    'xunit/enricomi-publish-unit-test-result-action__fixie.xml',
    'Expected: System.String\nActual:   System.Int32',
    '   at [genericTestClassForStackTrace].ShouldBeString[T](T genericArgument) in [fileLocation]:line #',
    'Expected: System.String Actual: System.Int32 @ [genericTestClassForStackTrace].ShouldBeString[T](…) ([fileLocation]:line #)',
  ],
  [
    'xunit/enricomi-publish-unit-test-result-action__fixie.xml',
    "'Fail' failed!",
    '   at [testClassForStackTrace].Fail() in [fileLocation]:line #',
    "'Fail' failed! @ [testClassForStackTrace].Fail() ([fileLocation]:line #)",
  ],
  [
    'xunit/enricomi-publish-unit-test-result-action__fixie.xml',
    'Expected: 2\nActual:   1',
    '   at [testClassForStackTrace].FailByAssertion() in [fileLocation]:line #',
    'Expected: <n> Actual: <n> @ [testClassForStackTrace].FailByAssertion() ([fileLocation]:line #)',
  ],
  [
    'xunit/enricomi-publish-unit-test-result-action__pickles.xml',
    '\n          System.InvalidOperationException : This is a fake failure message\n        ',
    '\n          at Pickles.TestHarness.xUnit.Steps.ThenTheResultShouldBePass(Int32 result) in C:\\dev\\pickles-results-harness\\Pickles.TestHarness\\Pickles.TestHarness.xUnit\\Steps.cs:line 26\n          at lambda_method(Closure , IContextManager , Int32 )\n          at TechTalk.SpecFlow.Bindings.MethodBinding.InvokeAction(IContextManager contextManager, Object[] arguments, ITestTracer testTracer, TimeSpan& duration)\n          at TechTalk.SpecFlow.Bindings.StepDefinitionBinding.Invoke(IContextManager contextManager, ITestTracer testTracer, Object[] arguments, TimeSpan& duration)\n          at TechTalk.SpecFlow.Infrastructure.TestExecutionEngine.ExecuteStepMatch(BindingMatch match, Object[] arguments)\n          at TechTalk.SpecFlow.Infrastructure.TestExecutionEngine.ExecuteStep(StepArgs stepArgs)\n          at TechTalk.SpecFlow.Infrastructure.TestExecutionEngine.OnAfterLastStep()\n          at TechTalk.',
    'System.InvalidOperationException : This is a fake failure message @ Pickles.TestHarness.xUnit.Steps.ThenTheResultShouldBePass(…) (Steps.cs)',
  ],
  [
    'xunit/jenkins-xunit-plugin__xunitdotnet-testcase1-input.xml',
    'Assert.True() Failure',
    '   at MyProject.Tests.SampleFact.FailedTest() in c:\\Jenkins\\jobs\\my-project\\workspace\\MyProject\\MyProject.Tests\\SampleFact.cs:line 16',
    'Assert.True() Failure @ MyProject.Tests.SampleFact.FailedTest() (SampleFact.cs)',
  ],
  ['xunit/trr-parser__multiple-suites.xml', 'Test message', 'Test output', 'Test message'],
  [
    'ctrf/ctrf-github-test-reporter__ctrf-report.json',
    '\u001b[31mTimed out 5000ms waiting for \u001b[39m\u001b[2mexpect(\u001b[22m\u001b[31mlocator\u001b[39m\u001b[2m).\u001b[22mtoHaveTitle\u001b[2m(\u001b[22m\u001b[32mexpected\u001b[39m\u001b[2m)\u001b[22m\n\nLocator: locator(\':root\')\nExpected pattern: \u001b[32m/Playwrc cight/\u001b[39m\nReceived string:  \u001b[31m"Fast and reliable end-to-end testing for modern web apps | Playwright"\u001b[',
    'ProfileTest.js:45',
    'Timed out <n>ms waiting for expect(locator).toHaveTitle(expected) Locator: locator(\':root\') Expected pattern: /Playwrc cight/ Received string: "Fast and reliable end-to-end testing for modern web apps | Playwright"\u001b[',
  ],
  [
    'ctrf/ctrf-github-test-reporter__ctrf-report.json',
    'Network Timeout',
    'ProfileUpdateTest.js:60',
    'Network Timeout',
  ],
  [
    'ctrf/ctrf__comprehensive.json',
    'Payment gateway timeout',
    'Error: Payment gateway timeout\n    at processPayment (payment.js:23:10)',
    'Payment gateway timeout @ processPayment (payment.js)',
  ],
  [
    'ctrf/ctrf__comprehensive.json',
    'Element not found: .dashboard-metrics',
    'Error: Element not found: .dashboard-metrics\n    at waitForElement (test.js:45:10)\n    at Object.<anonymous> (dashboard.test.js:42:5)',
    'Element not found: .dashboard-metrics @ waitForElement (test.js)',
  ],
  ['ctrf/ctrf__with-retries.json', 'Connection timeout', '', 'Connection timeout'],
  [
    'cucumber/cucumber-json-converter__cucumber-ruby-7.1.0__failing-after-step-hook.json',
    "Failing after step (RuntimeError)\n./stepdefs.rb:10:in `AfterStep'",
    "Failing after step (RuntimeError)\n./stepdefs.rb:10:in `AfterStep'",
    "Failing after step (RuntimeError) ./stepdefs.rb:<n>:in `AfterStep' @ stepdefs.rb in AfterStep",
  ],
  [
    'cucumber/cucumber-json-converter__cucumber-ruby-7.1.0__failing-passing-pending-scenarios.json',
    "Fail (RuntimeError)\n./stepdefs.rb:17:in `/fail/'\n../../features/failing-passing-pending-scenarios.feature:3:in `this step fails'",
    "Fail (RuntimeError)\n./stepdefs.rb:17:in `/fail/'\n../../features/failing-passing-pending-scenarios.feature:3:in `this step fails'",
    "Fail (RuntimeError) ./stepdefs.rb:<n>:in `/fail/' ../../features/failing-passing-pending-scenarios.feature:<n>:in `this step fails' @ stepdefs.rb in /fail/",
  ],
  [
    'cucumber/cucumber-json-converter__cucumber-ruby-7.1.0__flaky-scenario.json',
    "Flaky (RuntimeError)\n./stepdefs.rb:31:in `/flaky/'\n../../features/flaky-scenario.feature:5:in `this step is flaky'",
    "Flaky (RuntimeError)\n./stepdefs.rb:31:in `/flaky/'\n../../features/flaky-scenario.feature:5:in `this step is flaky'",
    "Flaky (RuntimeError) ./stepdefs.rb:<n>:in `/flaky/' ../../features/flaky-scenario.feature:<n>:in `this step is flaky' @ stepdefs.rb in /flaky/",
  ],
  [
    'cucumber/cucumber-json-converter__cucumber-ruby-7.1.0__scenario-outline.json',
    "Fail (RuntimeError)\n./stepdefs.rb:17:in `/fail/'\n../../features/scenario-outline.feature:9:3:in `a failing step'",
    "Fail (RuntimeError)\n./stepdefs.rb:17:in `/fail/'\n../../features/scenario-outline.feature:9:3:in `a failing step'",
    "Fail (RuntimeError) ./stepdefs.rb:<n>:in `/fail/' ../../features/scenario-outline.feature:<n>:<n>:in `a failing step' @ stepdefs.rb in /fail/",
  ],
  [
    'cucumber/trr-parser__multiple-suites-multiple-tests.json',
    'AssertionError [ERR_ASSERTION]: 13 == 14\n    + expected - actual\n\n    -13\n    +14\n\n    at CustomWorld.<anonymous> (D:\\workspace\\nodejs\\cc-tests\\features\\support\\steps.js:18:12)',
    'AssertionError [ERR_ASSERTION]: 13 == 14\n    + expected - actual\n\n    -13\n    +14\n\n    at CustomWorld.<anonymous> (D:\\workspace\\nodejs\\cc-tests\\features\\support\\steps.js:18:12)',
    'AssertionError [ERR_ASSERTION]: <n> == <n> + expected - actual -<n> +<n> at CustomWorld.<anonymous> (D:\\workspace\\nodejs\\cc-tests\\features\\support\\steps.js:<n>:<n>) @ CustomWorld.<anonymous> (steps.js)',
  ],
];

/** Our own: the frameworks' usual traces, where the first frames are the framework's or the runtime's. */
const OWN: [label: string, message: string, trace: string, key: string][] = [
  [
    'Java: JUnit 5 and JDK frames above the test',
    'expected: <42> but was: <41>',
    [
      'org.opentest4j.AssertionFailedError: expected: <42> but was: <41>',
      '\tat org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)',
      '\tat org.junit.jupiter.api.Assertions.assertEquals(Assertions.java:1141)',
      '\tat app//com.acme.cart.CartTest.totals(CartTest.java:37)',
      '\tat java.base/java.lang.reflect.Method.invoke(Method.java:580)',
    ].join('\n'),
    'expected: <<n>> but was: <<n>> @ com.acme.cart.CartTest.totals(CartTest.java)',
  ],
  [
    'Java: a lambda in the project and a Kotlin frame',
    'java.lang.IllegalStateException: order 7f3a9c21 closed',
    [
      'java.lang.IllegalStateException: order 7f3a9c21 closed',
      '\tat kotlin.collections.CollectionsKt.first(Collections.kt:12)',
      '\tat com.acme.orders.OrderService.lambda$close$3(OrderService.kt:88)',
    ].join('\n'),
    'java.lang.IllegalStateException: order <id> closed @ com.acme.orders.OrderService.lambda$close$<n>(OrderService.kt)',
  ],
  [
    'JavaScript: Jest frames from node_modules first',
    'expect(received).toBe(expected) // Object.is equality\n\nExpected: 3\nReceived: 4',
    [
      'Error: expect(received).toBe(expected) // Object.is equality',
      '    at Object.toBe (/home/runner/work/shop/node_modules/expect/build/index.js:218:22)',
      '    at Object.<anonymous> (/home/runner/work/shop/src/cart.test.ts:14:23)',
      '    at Promise.then.completed (/home/runner/work/shop/node_modules/jest-circus/build/utils.js:298:28)',
    ].join('\n'),
    'expect(received).toBe(expected) // Object.is equality Expected: <n> Received: <n> @ Object.<anonymous> (cart.test.ts)',
  ],
  [
    'JavaScript: node internals, then an async function of the project',
    'connect ECONNREFUSED 127.0.0.1:5432',
    [
      'Error: connect ECONNREFUSED 127.0.0.1:5432',
      '    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1607:16)',
      '    at async Pool.connect (/builds/shop/src/db/pool.js:40:5)',
    ].join('\n'),
    'connect ECONNREFUSED <n>:<n> @ Pool.connect (pool.js)',
  ],
  [
    'JavaScript: a bare frame of the project',
    'Cannot read properties of undefined (reading "id")',
    [
      "TypeError: Cannot read properties of undefined (reading 'id')",
      '    at /srv/app/src/users.js:12:9',
      '    at node:internal/process/task_queues:95:5',
    ].join('\n'),
    'Cannot read properties of undefined (reading "id") @ users.js',
  ],
  [
    'Python: pytest and the standard library around the test (innermost last)',
    'AssertionError: assert 3 == 4',
    [
      'Traceback (most recent call last):',
      '  File "/usr/lib/python3.12/unittest/case.py", line 58, in testPartExecutor',
      '    yield',
      '  File "/home/ci/shop/tests/test_cart.py", line 14, in test_total',
      '    assert cart.total() == 4',
      '  File "/home/ci/.venv/lib/python3.12/site-packages/_pytest/assertion/rewrite.py", line 12, in call',
      'AssertionError: assert 3 == 4',
    ].join('\n'),
    'AssertionError: assert <n> == <n> @ test_cart.py in test_total',
  ],
  [
    "Python: pytest's short traceback",
    'assert 3 == 4',
    [
      '    def test_total():',
      '>       assert total([1, 2]) == 4',
      'E       assert 3 == 4',
      '',
      'tests/test_cart.py:7: AssertionError',
    ].join('\n'),
    'assert <n> == <n> @ test_cart.py',
  ],
  [
    '.NET: NUnit and System frames first, a project frame with its file',
    'Expected: 5\n  But was:  4',
    [
      '   at NUnit.Framework.Assert.That[TActual](TActual actual, IResolveConstraint expression)',
      '   at System.RuntimeMethodHandle.InvokeMethod(Object target, Void** arguments)',
      '   at Acme.Shop.Tests.CartTests.Totals() in D:\\a\\shop\\tests\\CartTests.cs:line 27',
    ].join('\n'),
    'Expected: <n> But was: <n> @ Acme.Shop.Tests.CartTests.Totals() (CartTests.cs)',
  ],
  [
    '.NET: a temporary path and a GUID in the message',
    'Could not find file C:\\Users\\ci\\AppData\\Local\\Temp\\tmp4F2.tmp for 0d5c1e4a-77b2-4e0c-9b1c-6f0e5a2b9d11',
    '   at Acme.Files.Store.Read(String path) in /src/Store.cs:line 10',
    'Could not find file <tmp> for <id> @ Acme.Files.Store.Read(…) (Store.cs)',
  ],
  ['Go: t.Errorf', 'Failed', '    cart_test.go:42: total: expected 3, got 4', 'Failed @ cart_test.go'],
  [
    'Go: a panic, runtime frames first',
    'panic: runtime error: index out of range [5] with length 3',
    [
      'panic: runtime error: index out of range [5] with length 3 [recovered]',
      '',
      'goroutine 7 [running]:',
      'testing.tRunner.func1.2({0x1029a0, 0xc000012345})',
      '\t/usr/local/go/src/testing/testing.go:1631 +0x1c4',
      'panic({0x1029a0?, 0xc000012345?})',
      '\t/usr/local/go/src/runtime/panic.go:770 +0x124',
      'github.com/acme/shop/cart.(*Cart).Item(...)',
      '\t/home/runner/work/shop/cart/cart.go:31 +0x28',
    ].join('\n'),
    'panic: runtime error: index out of range [<n>] with length <n> @ cart.(*Cart).Item (cart.go)',
  ],
  [
    'Ruby: a step definition',
    'expected 3 to eq 4 (RSpec::Expectations::ExpectationNotMetError)',
    [
      "/usr/local/bundle/gems/rspec-support-3.12.0/lib/rspec/support.rb:108:in `block in <module:Support>'",
      "./features/step_definitions/cart_steps.rb:9:in `/^the total is (\\d+)$/'",
    ].join('\n'),
    'expected <n> to eq <n> (RSpec::Expectations::ExpectationNotMetError) @ cart_steps.rb in /^the total is (\\d+)$/',
  ],
  [
    'timestamps, temporary paths and hexadecimal ids',
    'at 2026-11-26T17:00:00.123Z took 5000ms writing /tmp/jest-1abc/out1.txt (object 0x7ffd10)',
    '',
    'at <time> took <n>ms writing <tmp> (object <id>)',
  ],
  [
    'no message: the trace says what failed',
    '',
    'java.lang.NullPointerException: Cannot invoke "String.length()"\n\tat com.acme.Names.of(Names.java:5)',
    'java.lang.NullPointerException: Cannot invoke "String.length()" @ com.acme.Names.of(Names.java)',
  ],
  ['neither message nor trace', '', '', NO_MESSAGE],
];

describe('failureKey', () => {
  it('reads at least 30 real failures from the report corpus', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(30);
    const frameworks = new Set(CORPUS.map(([file]) => file.split('/')[0]));
    expect([...frameworks]).toEqual(
      expect.arrayContaining(['junit', 'nunit3', 'testng', 'xunit', 'ctrf', 'cucumber']),
    );
  });

  it.each(CORPUS)('%s: %j', (_file, message, trace, key) => {
    expect(failureKey(message, trace)).toBe(key);
  });

  it.each(OWN)('%s', (_label, message, trace, key) => {
    expect(failureKey(message, trace)).toBe(key);
  });

  it('gives the same key to one failure met again with other numbers, ids, times, paths and line numbers', () => {
    const at = (line: number, dir: string, id: string) =>
      failureKey(
        `Timeout after ${line * 10} ms waiting for job ${id} in /tmp/${dir}/work at 2026-11-${10 + line}T10:00:00Z`,
        `Error: timeout\n    at waitFor (/ci/${dir}/node_modules/wait/index.js:${line}:3)\n    at Context.<anonymous> (/ci/${dir}/test/jobs.spec.js:${line + 40}:11)`,
      );
    expect(at(1, 'a1', '6f1c2d3e-0000-4000-8000-000000000001')).toBe(
      at(7, 'b22', '0a9b8c7d-1111-4111-9111-111111111111'),
    );
    expect(at(1, 'a1', 'x')).toContain(`${FRAME_SEPARATOR}Context.<anonymous> (jobs.spec.js)`);
  });

  it('tells apart one message thrown from two places', () => {
    const trace = (method: string) =>
      `java.lang.IllegalStateException: closed\n\tat com.acme.Orders.${method}(Orders.java:10)`;
    expect(failureKey('closed', trace('cancel'))).not.toBe(failureKey('closed', trace('ship')));
  });

  it('strips stand-alone numbers, ids, hex, UUIDs, dates and temporary paths, but not the digits of identifiers', () => {
    const cases: [string, string][] = [
      ['expected 42 but was 41', 'expected <n> but was <n>'],
      [
        'org.opentest4j.AssertionFailedError: expected: <1> but was: <2>',
        'org.opentest4j.AssertionFailedError: expected: <<n>> but was: <<n>>',
      ],
      ['at Parser.getLine2() line 17', 'at Parser.getLine2() line <n>'],
      [
        'utf8 decode failed on x86_64 through the v2 API: sha256 mismatch',
        'utf8 decode failed on x86_64 through the v2 API: sha256 mismatch',
      ],
      ['Connection refused: db-1:5432 after 1003 ms', 'Connection refused: db-<n>:<n> after <n> ms'],
      [
        'User 5f0c2b1e-1d2a-4c4e-9a2b-000000000001 not found (object 0x7ffd10)',
        'User <id> not found (object <id>)',
      ],
      [
        'java.lang.Object@7852e922 is not commit a3f9c21 in e2e',
        'java.lang.Object@<id> is not commit <id> in e2e',
      ],
      ['ENOENT: no such file /tmp/jest-1abc/out1.txt', 'ENOENT: no such file <tmp>'],
      ['at 2026-11-26T17:00:00.123Z took 5000ms, 1.5 s', 'at <time> took <n>ms, <n> s'],
      ['', '(no message)'],
    ];
    expect(cases.map(([message]) => [message, normaliseMessage(message)])).toEqual(cases);
  });

  it('keeps the digits of identifiers and short hex-like words', () => {
    expect(
      normaliseMessage('org.opentest4j.AssertionFailedError at getLine2() in e2e with utf8, v2, sha256'),
    ).toBe('org.opentest4j.AssertionFailedError at getLine2() in e2e with utf8, v2, sha256');
  });

  it('keeps 300 characters of the message and 200 of the frame', () => {
    const key = failureKey('x'.repeat(5000), `\tat com.acme.${'A'.repeat(400)}.run(A.java:1)`);
    const [message, frame] = key.split(FRAME_SEPARATOR);
    expect(message).toHaveLength(300);
    expect(frame).toHaveLength(200);
  });

  it('has no frame when every frame is a framework one', () => {
    expect(
      firstOwnFrame(
        '\tat org.junit.Assert.fail(Assert.java:89)\n\tat java.base/java.lang.Thread.run(Thread.java:1583)',
      ),
    ).toBeNull();
    expect(firstOwnFrame(null)).toBeNull();
  });
});

import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { FunctionSpec } from '../../shared/platform/catalogue.js';
import type { VpcSettings } from '../config.js';

/** HTTPS: every AWS API and every cluster endpoint fleetscope reaches. */
const HTTPS = ec2.Port.tcp(443);

/**
 * The AWS services the functions' code calls (the IAM evaluation, test/infra/iam.sim.test.ts, checks
 * every recorded call's service is here), and the access a function needs for each. DynamoDB and S3
 * are gateway endpoints (free, on the subnets' route tables); the rest interface endpoints. CloudWatch
 * Logs, EMF metrics and X-Ray leave through the Lambda service, not the function's ENIs, so they need
 * none; dead-letter queues are written by Lambda, EventBridge and Scheduler, never by the code.
 */
export const SERVICE_ENDPOINTS = {
  dynamodb: { kind: 'gateway', needed: () => true },
  s3: { kind: 'gateway', needed: (s: FunctionSpec) => !!s.access.reportBucket },
  events: { kind: 'interface', needed: (s: FunctionSpec) => s.access.putEvents },
  secretsmanager: { kind: 'interface', needed: (s: FunctionSpec) => s.access.kubeconfigSecrets },
  sts: { kind: 'interface', needed: (s: FunctionSpec) => s.access.kubeconfigSecrets },
} as const;
export type EndpointService = keyof typeof SERVICE_ENDPOINTS;

export interface NetworkProps {
  settings: VpcSettings;
  /** The functions that run in it: which endpoints are needed follows from what they may call. */
  specs: FunctionSpec[];
  logRetentionDays: logs.RetentionDays;
}

/**
 * Where the functions run when context `vpc` is set: the customer's VPC and subnets, or a small one
 * created here (two AZs, flow logs on). One security group for every function, egress HTTPS only: to
 * the cluster endpoints' CIDRs and to the interface endpoints. The AWS services are reached through VPC
 * endpoints (egress "endpoints") or a NAT gateway the stack creates or the subnets already route to
 * (egress "nat"). Environment-agnostic: an existing VPC is named by ids, never looked up.
 */
export class Network extends Construct {
  readonly vpc: ec2.IVpc;
  readonly subnets: ec2.ISubnet[];
  readonly securityGroup: ec2.SecurityGroup;
  /** The endpoints created, by service (none with egress "nat"). */
  readonly endpoints = new Map<EndpointService, ec2.GatewayVpcEndpoint | ec2.InterfaceVpcEndpoint>();

  constructor(scope: Construct, id: string, props: NetworkProps) {
    super(scope, id);
    const { settings } = props;
    if (settings.vpcId) {
      this.vpc = ec2.Vpc.fromVpcAttributes(this, 'Vpc', {
        vpcId: settings.vpcId,
        // Only the ids are used (no lookup); the AZs are placeholders Lambda never reads.
        availabilityZones: settings.subnetIds.map((_, i) => `az-${i}`),
      });
      this.subnets = settings.subnetIds.map((subnetId, i) => {
        const routeTableId = settings.routeTableIds[i] ?? settings.routeTableIds[0];
        // Without route tables (egress "nat": the subnets route out already) no gateway endpoint needs one.
        return routeTableId
          ? ec2.Subnet.fromSubnetAttributes(this, `Subnet${i}`, { subnetId, routeTableId })
          : ec2.Subnet.fromSubnetId(this, `Subnet${i}`, subnetId);
      });
    } else {
      const vpc = createdVpc(this, settings, props.logRetentionDays);
      this.vpc = vpc;
      this.subnets = vpc.selectSubnets({
        subnetType:
          settings.egress === 'nat' ? ec2.SubnetType.PRIVATE_WITH_EGRESS : ec2.SubnetType.PRIVATE_ISOLATED,
      }).subnets;
    }
    this.securityGroup = new ec2.SecurityGroup(this, 'Functions', {
      vpc: this.vpc,
      description: 'fleetscope functions: HTTPS out to cluster endpoints and AWS service endpoints only',
      allowAllOutbound: false,
    });
    for (const cidr of settings.egressCidrs)
      this.securityGroup.addEgressRule(ec2.Peer.ipv4(cidr), HTTPS, `cluster API endpoints in ${cidr}`);
    // Narrowed egress (infra/config.ts checks the case): DynamoDB and S3 at their gateway endpoints.
    for (const id of settings.prefixListIds)
      this.securityGroup.addEgressRule(
        ec2.Peer.prefixList(id),
        HTTPS,
        `AWS gateway endpoint prefix list ${id}`,
      );
    if (settings.egress === 'endpoints') this.addEndpoints(props.specs);
  }

  private addEndpoints(specs: FunctionSpec[]): void {
    const needed = (Object.keys(SERVICE_ENDPOINTS) as EndpointService[]).filter((s) =>
      specs.some((spec) => SERVICE_ENDPOINTS[s].needed(spec)),
    );
    const interfaces = needed.filter((s) => SERVICE_ENDPOINTS[s].kind === 'interface');
    const endpointSg = interfaces.length
      ? new ec2.SecurityGroup(this, 'Endpoints', {
          vpc: this.vpc,
          description: 'fleetscope interface endpoints: HTTPS in from the functions only',
          allowAllOutbound: false,
        })
      : undefined;
    if (endpointSg) {
      endpointSg.addIngressRule(this.securityGroup, HTTPS, 'fleetscope functions');
      this.securityGroup.addEgressRule(endpointSg, HTTPS, 'AWS interface endpoints');
    }
    for (const service of needed) {
      const id = `${service[0]!.toUpperCase()}${service.slice(1)}`;
      if (SERVICE_ENDPOINTS[service].kind === 'gateway')
        this.endpoints.set(
          service,
          new ec2.GatewayVpcEndpoint(this, id, {
            vpc: this.vpc,
            service: new ec2.GatewayVpcEndpointAwsService(service),
            subnets: [{ subnets: this.subnets }],
          }),
        );
      else
        this.endpoints.set(
          service,
          new ec2.InterfaceVpcEndpoint(this, id, {
            vpc: this.vpc,
            service: new ec2.InterfaceVpcEndpointAwsService(service),
            subnets: { subnets: this.subnets },
            securityGroups: [endpointSg!],
            privateDnsEnabled: true,
            open: false,
          }),
        );
    }
  }

  /**
   * What Lambda needs of the role to attach the function to the subnets (AWS's
   * AWSLambdaVPCAccessExecutionRole, inline): EC2 supports no resource-level permission for the
   * Describe action, and the ENIs' ids are only known once Lambda creates them.
   */
  static eniStatement(): iam.PolicyStatement {
    return new iam.PolicyStatement({
      sid: 'VpcNetworkInterfaces',
      actions: [
        'ec2:CreateNetworkInterface',
        'ec2:DescribeNetworkInterfaces',
        'ec2:DescribeSubnets',
        'ec2:DeleteNetworkInterface',
        'ec2:AssignPrivateIpAddresses',
        'ec2:UnassignPrivateIpAddresses',
      ],
      resources: ['*'],
    });
  }
}

/** A small VPC: two AZs of private subnets (isolated, or behind one NAT gateway), flow logs kept. */
function createdVpc(scope: Construct, settings: VpcSettings, retention: logs.RetentionDays): ec2.Vpc {
  const nat = settings.egress === 'nat';
  const vpc = new ec2.Vpc(scope, 'Vpc', {
    ipAddresses: ec2.IpAddresses.cidr(settings.cidr),
    maxAzs: 2,
    natGateways: nat ? 1 : 0,
    // Nothing runs in the default security group; restricting it would add a custom resource Lambda.
    restrictDefaultSecurityGroup: false,
    subnetConfiguration: nat
      ? [
          { name: 'public', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24 },
          { name: 'functions', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 22 },
        ]
      : [{ name: 'functions', subnetType: ec2.SubnetType.PRIVATE_ISOLATED, cidrMask: 22 }],
  });
  vpc.addFlowLog('FlowLogs', {
    destination: ec2.FlowLogDestination.toCloudWatchLogs(new logs.LogGroup(scope, 'FlowLogs', { retention })),
    trafficType: ec2.FlowLogTrafficType.REJECT,
  });
  return vpc;
}

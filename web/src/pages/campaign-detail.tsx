export default function Page() { return <p>campaign-detail</p>; }
